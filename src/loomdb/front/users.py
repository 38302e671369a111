"""Users of the HTTP edges (`loom.as_(loom.operator).users`: the operator's), and who
a request is: an edge turns its bearer token into a caller here (`caller`), so no edge
imports the users area."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING

from .. import users as U
from .base import AreaDoor

if TYPE_CHECKING:
    from ..loom import Loom
    from ..users import Access, User

_OPERATOR_ONLY = "users and their tokens are the operator's"


class Users(AreaDoor):
    """Who may use the store over HTTP: each user sees only what they own."""

    def add(self, name: str) -> tuple[User, str]:
        """A new user and their token (shown once; only its hash is stored)."""
        self.sight.operator_only(_OPERATOR_ONLY)
        return U.add_user(self.loom, name)

    def rotate(self, name: str) -> tuple[User, str]:
        """A new token for a user; the old one stops working."""
        self.sight.operator_only(_OPERATOR_ONLY)
        return U.rotate_token(self.loom, name)

    def list(self) -> builtins.list[User]:
        """Every user (never their tokens)."""
        self.sight.operator_only(_OPERATOR_ONLY)
        return U.list_users(self.loom)

    def remove(self, name: str) -> None:
        """Delete a user; their trees stay, visible to no one over HTTP."""
        self.sight.operator_only(_OPERATOR_ONLY)
        U.remove_user(self.loom, name)


def any_users(loom: Loom) -> bool:
    """Whether the store has users (before a request's caller is known); a store that
    never used the users area is not given its tables by the question."""
    return loom.has_area(U.USERS) and U.has_users(loom)


def operator(loom: Loom) -> Access:
    """The local operator as a caller: sees the whole store."""
    return U.Everyone(loom)


def caller(loom: Loom, token: str) -> Access | None:
    """The user a bearer token belongs to, as a caller; None for an unknown token."""
    user = U.authenticate(loom, token)
    return None if user is None else U.Owner(loom, user)


__all__ = ["Users", "any_users", "caller", "operator"]
