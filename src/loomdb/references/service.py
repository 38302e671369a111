"""Links between any two addresses, and backlinks: everything that points at a thing.

A link between two nodes is the core's edge (today's `link`, unchanged). Any other pair
is a row of this area keyed by the targets' identities; backlinks also gather the
references other areas hold implicitly, asked through their hooks (`loomdb.hooks`):
collection items pointing at the thing, and document revisions sharing a message's
content (use case 7: the same content in a conversation and a document). Everything resolves at read time; a reference whose end
is gone is reported with `"dangling": true`, never raised.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .. import hooks
from ..addresses import Target, is_node_address, resolve, show
from ..errors import InvalidInput, NotFound
from ..model import new_id, now
from . import REFERENCES
from . import storage as S

if TYPE_CHECKING:
    from ..loom import Loom

_TYPE = re.compile(r"[a-z][a-z0-9_-]{0,49}")


def link(loom: Loom, src: str, dst: str, type: str = "link") -> dict[str, Any]:
    """Reference `dst` from `src`: a core edge between nodes, else a reference row."""
    if is_node_address(src) and is_node_address(dst):
        return loom.link(src, dst, type=type).to_json()
    if not _TYPE.fullmatch(type or ""):
        raise InvalidInput(f"link type {type!r}", "use 1-50 lowercase letters, digits, '_', '-'")
    a, b = resolve(loom, src), resolve(loom, dst)
    if a.key == b.key:
        raise InvalidInput(f"link {a.address} -> {b.address}", "a thing cannot reference itself")
    row = (new_id(), a.key, a.address, b.key, b.address, type, now())
    with loom.unit(REFERENCES) as db:
        S.insert(db, row)
    return {"id": row[0], "from": a.address, "to": b.address, "type": type,
            "created_at": row[6]}


def backlinks(loom: Loom, entity: str) -> list[dict[str, Any]]:
    """Every reference to `entity` (for a document, to any of its revisions too)."""
    try:
        target: Target | None = resolve(loom, entity)
    except NotFound:
        target = None
    out = _stored(loom, target, entity)
    if target is not None:
        out += _edges(loom, target) + hooks.backlinks(loom, target)
    return out


def _stored(loom: Loom, target: Target | None, entity: str) -> list[dict[str, Any]]:
    with loom.unit(REFERENCES) as db:
        if target is None:  # the thing is gone: links made to it by that address
            rows = S.to_address(db, entity)
        else:
            rows = S.to_key(db, target.key)
    out = []
    for from_key, from_addr, to_key, to_addr, kind in rows:
        src, src_gone = show(loom, from_key, from_addr)
        dst, dst_gone = show(loom, to_key, to_addr)
        row: dict[str, Any] = {"from": src, "to": dst, "type": kind}
        if src_gone or dst_gone:
            row["dangling"] = True
        out.append(row)
    return out


def _edges(loom: Loom, target: Target) -> list[dict[str, Any]]:
    if target.kind != "node":
        return []
    return [{"from": src, "to": e.target, "type": e.type}
            for e in loom.edges(target.address) if e.target == target.address
            for src, _ in e.sources]


def link_keys(loom: Loom) -> list[str]:
    """Every key a reference points from or at (gc keeps them)."""
    with loom.unit(REFERENCES) as db:
        return S.keys(db)
