"""Ref rules in one place: what a name may be, and how a ref moves (CAS + log).

Sessions, views and bookmarks share one namespace, unique in the store, so a name
used as a headish is never ambiguous between kinds. Every move goes through
`move()`, which compare-and-swaps inside the caller's transaction and records the
move in the ref log, so any move can be inspected and undone.
"""

from __future__ import annotations

import re

from .errors import InvalidInput, RefConflict
from .model import Ref, RefMove, now
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
    backend: Backend, ref: Ref, new: str | None, *, actor: str, reason: str,
    at: str | None = None,
) -> Ref:
    """Move `ref` to `new` (None: deleted) and log it, if it is still as it was read.

    The compare-and-swap is on the ref's log: the move is line `ref.seq + 1`, which
    another writer can only have taken by changing the ref since `ref` was read (a move,
    a selection, a deletion). Raise RefConflict then; return the ref as it now is."""
    line = RefMove(ref.seq + 1, ref.name, at or now(), ref.node, new, actor, reason, ref.tree)
    if not backend.refs.move_ref(line):
        current = backend.refs.get_ref(ref.name)
        raise RefConflict(ref.name, ref.node, current.node if current else None)
    return Ref(ref.name, ref.kind, ref.tree, new or ref.node, ref.created_at, line.at,
               ref.selections, ref.origin, line.seq)


def creation(name: str, node: str, *, actor: str, reason: str, tree: str | None = None) -> RefMove:
    """The first line a new ref writes to its log (the backend numbers it)."""
    return RefMove(0, name, now(), None, node, actor, reason, tree)
