"""Share links, stored: one row per link, found by the sha256 of its token.

A link is a capability: whoever holds the token reads what it names and nothing else,
without an account. So the store keeps only the token's hash (a copy of the store, a
backup or a log of its queries hands out no link) and a short prefix to list it by; a
token is looked up by its hash, an equality on an index, so no comparison of secrets
is made whose time could leak how much of a guess was right. A link names either a
node (a snapshot: it never moves) or a session (live: it follows the session's head).
Revoking deletes the row: the link is then unknown, as a guessed one is.

A link may also allow "continue" (`allow_continue`): a signed-in reader gets a tree of
their own that goes on from the shared node. Each such fork keeps a grant row
(`share_forks`, keyed by the fork's tree) naming the exact node it continues from; the
fork's context reads the shared path through that row, never through the link, so
revoking the link stops new forks and leaves the ones made. The maker is told how many
forks a link has, nothing else of them.

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

_COLUMNS = "id, prefix, kind, tree_id, node_id, ref_name, user_id, created_at, allow_continue"
#: what a read selects: the columns and the link's fork count
_READ = _COLUMNS + ", (SELECT count(*) FROM share_forks f WHERE f.share_id = shares.id)"


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
    allow_continue: bool = False
    forks: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "prefix": self.prefix, "kind": self.kind, "tree": self.tree,
                "node": self.node, "session": self.session, "created_at": self.created_at,
                "allow_continue": self.allow_continue, "forks": self.forks}


def _share(row: Any) -> Share:
    return Share(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7],
                 bool(row[8]), int(row[9]))


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create(loom: Loom, *, tree: str, node: str | None, session: str | None,
           user: str | None, allow_continue: bool = False) -> tuple[Share, str]:
    """A new link (a snapshot of `node`, or live on `session`) and its token, which is
    returned once and never stored. Call inside the caller's transaction."""
    if (node is None) == (session is None):
        raise InvalidInput("share", "name exactly one of a node or a session")
    token = secrets.token_urlsafe(32)
    share = Share(new_id(), token[:PREFIX], "live" if session else "snapshot", tree, node,
                  session, user, now(), bool(allow_continue))
    with loom.unit(SHARES) as db:
        held = db.one("SELECT count(*) FROM shares WHERE coalesce(user_id, '') = ?",
                      (user or "",))
        if held is not None and held[0] >= MAX_SHARES:
            raise InvalidInput("share", f"at most {MAX_SHARES} links at once: revoke some first")
        db.execute(f"INSERT INTO shares ({_COLUMNS}, token_hash) VALUES "
                   "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (share.id, share.prefix, share.kind, share.tree, share.node, share.session,
                    share.user, share.created_at, int(share.allow_continue),
                    token_hash(token)))
    return share, token


def listed(loom: Loom, user: str | None, *, everyone: bool = False) -> list[Share]:
    """The links `user` made (None: the operator's), or every link (`everyone`)."""
    with loom.unit(SHARES) as db:
        if everyone:
            rows = db.execute(f"SELECT {_READ} FROM shares ORDER BY created_at, id")
        elif user is None:
            rows = db.execute(f"SELECT {_READ} FROM shares WHERE user_id IS NULL "
                              "ORDER BY created_at, id")
        else:
            rows = db.execute(f"SELECT {_READ} FROM shares WHERE user_id = ? "
                              "ORDER BY created_at, id", (user,))
    return [_share(r) for r in rows]


def by_token(loom: Loom, token: str) -> Share | None:
    """The link a token opens (looked up by its hash), or None."""
    if not isinstance(token, str) or not 0 < len(token) <= 200:
        return None
    with loom.unit(SHARES) as db:
        row = db.one(f"SELECT {_READ} FROM shares WHERE token_hash = ?", (token_hash(token),))
    return None if row is None else _share(row)


def by_id(loom: Loom, share_id: str) -> Share | None:
    if not isinstance(share_id, str) or not 0 < len(share_id) <= 200:
        return None
    with loom.unit(SHARES) as db:
        row = db.one(f"SELECT {_READ} FROM shares WHERE id = ?", (share_id,))
    return None if row is None else _share(row)


def delete(loom: Loom, share_id: str) -> None:
    with loom.unit(SHARES) as db:
        db.execute("DELETE FROM shares WHERE id = ?", (share_id,))


def record_fork(loom: Loom, share: Share, *, tree: str, source_tree: str, source_node: str,
                user: str | None) -> None:
    """The grant of fork `tree`: it continues from `source_node` of `source_tree`
    (call inside the transaction that makes the tree)."""
    with loom.unit(SHARES) as db:
        db.execute("INSERT INTO share_forks (tree_id, share_id, source_tree, source_node, "
                   "user_id, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                   (tree, share.id, source_tree, source_node, user, now()))


def fork_grant(loom: Loom, tree: str) -> tuple[str, str] | None:
    """(source tree, source node) a fork made through a link continues from, or None
    when `tree` is no such fork (a store that never shared makes no table for this)."""
    if not loom.has_area(SHARES):
        return None
    with loom.unit(SHARES) as db:
        row = db.one("SELECT source_tree, source_node FROM share_forks WHERE tree_id = ?",
                     (tree,))
    return None if row is None else (row[0], row[1])


__all__ = ["KINDS", "MAX_SHARES", "PREFIX", "SHARES", "Share", "by_id", "by_token", "create",
           "delete", "fork_grant", "listed", "record_fork", "token_hash"]
