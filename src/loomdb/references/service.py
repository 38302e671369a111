"""Links between any two addresses, and backlinks: everything that points at a thing.

A link between two nodes is the core's edge (today's `link`, unchanged). Any other pair
is a row of this area keyed by the targets' identities; backlinks also gather the
references other areas hold implicitly: collection items pointing at the thing, and
document revisions sharing a message's content (use case 7: the same content in a
conversation and a document). Everything resolves at read time; a reference whose end
is gone is reported with `"dangling": true`, never raised.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, NotFound
from ..model import new_id, now
from . import REFERENCES
from .address import Target, is_node_address, resolve, show

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
        db.execute("INSERT INTO ref_links VALUES (?, ?, ?, ?, ?, ?, ?)", row)
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
        out += _edges(loom, target) + _items(loom, target) + _same_content(loom, target)
    return out


def _stored(loom: Loom, target: Target | None, entity: str) -> list[dict[str, Any]]:
    with loom.unit(REFERENCES) as db:
        if target is None:  # the thing is gone: links made to it by that address
            rows = db.execute("SELECT from_key, from_addr, to_key, to_addr, type FROM ref_links "
                              "WHERE to_addr = ? ORDER BY id", (entity,))
        else:
            rows = db.execute("SELECT from_key, from_addr, to_key, to_addr, type FROM ref_links "
                              "WHERE to_key = ? OR substr(to_key, 1, ?) = ? ORDER BY id",
                              (target.key, len(target.key) + 1, target.key + "@"))
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


def _items(loom: Loom, target: Target) -> list[dict[str, Any]]:
    from ..collections import service as K

    return [{"from": f"coll:{name}/{item}", "to": target.address, "type": "item"}
            for name, item in K.holders(loom, target.key)]


def _same_content(loom: Loom, target: Target) -> list[dict[str, Any]]:
    from ..documents import DOCUMENTS

    if target.kind == "node":
        cid = loom.node(target.address).content_id
    elif target.kind == "content":
        cid = target.address
    else:
        return []
    with loom.unit(DOCUMENTS) as db:
        rows = db.execute("SELECT d.name, r.id FROM doc_revisions r JOIN doc_documents d "
                          "ON d.id = r.document_id WHERE r.content_id = ? ORDER BY r.id", (cid,))
    return [{"from": f"doc:{name}@{rev}", "to": target.address, "type": "content"}
            for name, rev in rows]


def link_keys(loom: Loom) -> list[str]:
    """Every key a reference points from or at (gc keeps them)."""
    with loom.unit(REFERENCES) as db:
        return [r[0] for r in db.execute(
            "SELECT to_key FROM ref_links UNION SELECT from_key FROM ref_links")]
