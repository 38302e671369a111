"""Accounts: a name and a hashed bearer token per user."""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass

from ..errors import InvalidInput, NotFound
from ..loom import Loom
from ..model import new_id, now
from ..store.areas import Area

USERS = Area("users", "loomdb.users")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


@dataclass(frozen=True, slots=True)
class User:
    """Someone holding a token; `id` is what ownership rows point at."""

    id: str
    name: str
    created_at: str

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "name": self.name, "created_at": self.created_at}


def token_hash(token: str) -> str:
    """What is stored for a token: its sha256, so the store never holds the token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def add_user(loom: Loom, name: str) -> tuple[User, str]:
    """Create a user; returns it with its token, which is never stored nor shown again."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InvalidInput(f"user name {name!r}",
                           "use 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit")
    token = secrets.token_urlsafe(32)
    user = User(new_id(), name, now())
    with loom.unit(USERS) as db:
        if db.one("SELECT 1 FROM users WHERE name = ?", (name,)):
            raise InvalidInput(f"user {name!r}", "already exists")
        db.execute("INSERT INTO users VALUES (?, ?, ?, ?)",
                   (user.id, user.name, token_hash(token), user.created_at))
    return user, token


def rotate_token(loom: Loom, name: str) -> tuple[User, str]:
    """Give a user a new token (returned, never stored nor shown again): the old one stops
    working at once, and everything they own stays theirs (ownership rows name the
    user's id, which does not change)."""
    token = secrets.token_urlsafe(32)
    with loom.unit(USERS) as db:
        row = db.one("SELECT id, name, created_at FROM users WHERE name = ?", (name,))
        if row is None:
            raise NotFound("user", name)
        db.execute("UPDATE users SET token_hash = ? WHERE id = ?", (token_hash(token), row[0]))
    return User(*row), token


def authenticate(loom: Loom, token: str) -> User | None:
    """The user holding `token`, or None."""
    with loom.unit(USERS) as db:
        row = db.one("SELECT id, name, created_at FROM users WHERE token_hash = ?",
                     (token_hash(token),))
    return None if row is None else User(*row)


def user_by_id(loom: Loom, user_id: str) -> User | None:
    """The user with this id (what ownership rows and share links name), or None."""
    with loom.unit(USERS) as db:
        row = db.one("SELECT id, name, created_at FROM users WHERE id = ?", (user_id,))
    return None if row is None else User(*row)


def has_users(loom: Loom) -> bool:
    """Whether any user exists: from then on every request needs a token."""
    with loom.unit(USERS) as db:
        return db.one("SELECT 1 FROM users LIMIT 1") is not None


def list_users(loom: Loom) -> list[User]:
    with loom.unit(USERS) as db:
        rows = db.execute("SELECT id, name, created_at FROM users ORDER BY name")
    return [User(*r) for r in rows]


def remove_user(loom: Loom, name: str) -> None:
    """Delete a user and their ownership rows; their trees, documents and collections
    stay, owned by nobody (hidden over HTTP)."""
    with loom.unit(USERS) as db:
        row = db.one("SELECT id FROM users WHERE name = ?", (name,))
        if row is None:
            raise NotFound("user", name)
        for table in ("user_trees", "user_documents", "user_collections"):
            db.execute(f"DELETE FROM {table} WHERE user_id = ?", (row[0],))
        db.execute("DELETE FROM user_imports WHERE user_id = ?", (row[0],))
        db.execute("DELETE FROM users WHERE id = ?", (row[0],))
