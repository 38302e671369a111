"""Ref rules in one place: what a name may be, and how a ref moves (CAS + log).

Sessions, views and bookmarks share one namespace, unique in the store, so a name
used as a headish is never ambiguous between kinds. Every move goes through
`move()`, which compare-and-swaps inside the caller's transaction and records the
move in the ref log, so any move can be inspected and undone.
"""

from __future__ import annotations

import re

from .errors import InvalidInput, RefConflict
from .model import RefMove, now
from .store.base import Backend

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._/-]{0,99}$")
_ULID = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$", re.IGNORECASE)


def check_name(name: str) -> str:
    """Refuse names that could be mistaken for an id or a headish expression."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise InvalidInput(
            f"ref name {name!r}",
            "use 1-100 letters, digits, '_', '.', '/', '-', starting with a letter, digit or '_'",
        )
    if _ULID.match(name):
        raise InvalidInput(f"ref name {name!r}", "looks like a node id; choose another name")
    if ".." in name or name.endswith(("/", ".")):
        raise InvalidInput(f"ref name {name!r}", "may not contain '..' or end with '/' or '.'")
    return name


def move(
    backend: Backend, name: str, expected: str, new: str, *, actor: str, reason: str
) -> None:
    """Compare-and-swap `name` from `expected` to `new` and log it; raise RefConflict."""
    at = now()
    if not backend.cas_ref(name, expected, new, at):
        current = backend.get_ref(name)
        raise RefConflict(name, expected, current.node if current else None)
    backend.log_move(RefMove(0, name, at, expected, new, actor, reason))


def log_change(
    backend: Backend, name: str, old: str | None, new: str | None, *, actor: str, reason: str
) -> None:
    """Record a ref event that is not a CAS move (creation, deletion, a selection)."""
    backend.log_move(RefMove(0, name, now(), old, new, actor, reason))
