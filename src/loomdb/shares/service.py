"""Share links, stored: one row per link, found by the sha256 of its token.

A link is a capability: whoever holds the token reads what it names and nothing else,
without an account. So the store keeps only the token's hash (a copy of the store, a
backup or a log of its queries hands out no link) and a short prefix to list it by; a
token is looked up by its hash, an equality on an index, so no comparison of secrets
is made whose time could leak how much of a guess was right. A link names either a
node (a snapshot: it never moves) or a session (live: it follows the session's head).
Revoking deletes the row: the link is then unknown, as a guessed one is.

What a link may be used for, and who may make, list and revoke one, is decided above
this module (`loomdb.front.shares`); this one only keeps the rows.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidInput
from ..loom import Loom
from ..model import new_id, now
from . import SHARES

#: how many characters of a token are kept to tell links apart in a list
PREFIX = 6
#: how many links one owner (a user, or the operator) may hold at once
MAX_SHARES = 1000
KINDS = ("snapshot", "live")

_COLUMNS = "id, prefix, kind, tree_id, node_id, ref_name, user_id, created_at"


@dataclass(frozen=True, slots=True)
class Share:
    """One link: `node` for a snapshot, `session` (a session's name) for a live one."""

    id: str
    prefix: str
    kind: str
    tree: str
    node: str | None
    session: str | None
    user: str | None
    created_at: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "prefix": self.prefix, "kind": self.kind, "tree": self.tree,
                "node": self.node, "session": self.session, "created_at": self.created_at}


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create(loom: Loom, *, tree: str, node: str | None, session: str | None,
           user: str | None) -> tuple[Share, str]:
    """A new link (a snapshot of `node`, or live on `session`) and its token, which is
    returned once and never stored. Call inside the caller's transaction."""
    if (node is None) == (session is None):
        raise InvalidInput("share", "name exactly one of a node or a session")
    token = secrets.token_urlsafe(32)
    share = Share(new_id(), token[:PREFIX], "live" if session else "snapshot", tree, node,
                  session, user, now())
    with loom.unit(SHARES) as db:
        held = db.one("SELECT count(*) FROM shares WHERE coalesce(user_id, '') = ?",
                      (user or "",))
        if held is not None and held[0] >= MAX_SHARES:
            raise InvalidInput("share", f"at most {MAX_SHARES} links at once: revoke some first")
        db.execute(f"INSERT INTO shares ({_COLUMNS}, token_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (share.id, share.prefix, share.kind, share.tree, share.node, share.session,
                    share.user, share.created_at, token_hash(token)))
    return share, token


def listed(loom: Loom, user: str | None, *, everyone: bool = False) -> list[Share]:
    """The links `user` made (None: the operator's), or every link (`everyone`)."""
    with loom.unit(SHARES) as db:
        if everyone:
            rows = db.execute(f"SELECT {_COLUMNS} FROM shares ORDER BY created_at, id")
        elif user is None:
            rows = db.execute(f"SELECT {_COLUMNS} FROM shares WHERE user_id IS NULL "
                              "ORDER BY created_at, id")
        else:
            rows = db.execute(f"SELECT {_COLUMNS} FROM shares WHERE user_id = ? "
                              "ORDER BY created_at, id", (user,))
    return [Share(*r) for r in rows]


def by_token(loom: Loom, token: str) -> Share | None:
    """The link a token opens (looked up by its hash), or None."""
    if not isinstance(token, str) or not 0 < len(token) <= 200:
        return None
    with loom.unit(SHARES) as db:
        row = db.one(f"SELECT {_COLUMNS} FROM shares WHERE token_hash = ?", (token_hash(token),))
    return None if row is None else Share(*row)


def by_id(loom: Loom, share_id: str) -> Share | None:
    if not isinstance(share_id, str) or not 0 < len(share_id) <= 200:
        return None
    with loom.unit(SHARES) as db:
        row = db.one(f"SELECT {_COLUMNS} FROM shares WHERE id = ?", (share_id,))
    return None if row is None else Share(*row)


def delete(loom: Loom, share_id: str) -> None:
    with loom.unit(SHARES) as db:
        db.execute("DELETE FROM shares WHERE id = ?", (share_id,))


__all__ = ["KINDS", "MAX_SHARES", "PREFIX", "SHARES", "Share", "by_id", "by_token", "create",
           "delete", "listed", "token_hash"]
