"""Redacted nodes in loomdb's own export (docs/forget.md).

A redacted node is exported as it is stored: its tombstone content, its original
content id and its chain hash, marked `"redacted": true` (a redacted generation record
likewise). Reading it back cannot recompute the content id from the tombstone, so the
node is rebuilt with the exported content id, its chain hash recomputed from that id
and its parents, and compared with the exported one as for every node: the tombstone
arrives as a tombstone and verifies there, and an altered export still fails.
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any

from ..chain import chain_hash
from ..storage_ops import storage
from ..store.forget import TOMBSTONE

if TYPE_CHECKING:
    from ..loom import Loom
    from ..model import Node

BLOCKS: list[dict[str, Any]] = json.loads(TOMBSTONE)


def mark_export(loom: Loom, records: list[dict[str, Any]]) -> None:
    """Mark the node records whose content is a redaction's tombstone."""
    maybe = [r for r in records if r.get("content") == BLOCKS]
    if not maybe:
        return
    fs = storage(loom).forgetting()
    erased = fs.redacted("content", [r["content_id"] for r in maybe])
    copies = fs.redacted("node", [r["id"] for r in maybe])
    for rec in maybe:
        if rec["content_id"] in erased or rec["id"] in copies:
            rec["redacted"] = True


def mark_generation(loom: Loom, rec: dict[str, Any]) -> dict[str, Any]:
    if storage(loom).forgetting().redacted("generation", [rec["id"]]):
        return {**rec, "redacted": True}
    return rec


def write(loom: Loom, rec: dict[str, Any], fields: dict[str, Any]) -> Node:
    """Store a redacted node record: the tombstone under its exported content id."""
    node, _, flags = loom.build_node(**{**fields, "blocks": BLOCKS})
    cid = str(rec.get("content_id"))
    linked = storage(loom).nodes_by_id([s for s, _ in node.sources] + list(node.selections.values()))
    parents = [fields["parent"].chain_hash] if fields["parent"] is not None else []
    parents += [linked[s].chain_hash for s, _ in node.sources if s in linked]
    parents += [linked[v].chain_hash for v in node.selections.values() if v in linked]
    node = dataclasses.replace(node, content_id=cid, chain_hash=chain_hash(
        content_id=cid, parents=parents, created_at=node.created_at, author=node.author,
        role=node.role, kind=node.kind, edited_from=node.edited_from, options=node.options,
        response=(node.provenance or {}).get("response_hash")))
    storage(loom).insert_tombstone(node, flags)
    return node


def write_secret(loom: Loom, rec: dict[str, Any], fields: dict[str, Any],
                 found: list[Any]) -> Node:
    """A node of an export holding a secret the store redacts: its content cannot
    change under its exported content id and chain hash, so the node is stored as a
    redaction leaves it (the tombstone, its content noted as erased: `verify` tells it
    from tampering), and the findings are noted."""
    from ..model import now

    node = write(loom, rec, fields)
    storage(loom).forgetting().mark_redacted([node.content_id], "content", now())
    storage(loom).note_findings(found, node.tree, node.id)
    return node


def record_generation(loom: Loom, rec: dict[str, Any]) -> None:
    """A generation record, noted as redacted when it was exported so."""
    redacted = rec.pop("redacted", None) is True
    storage(loom).record_generation(rec)  # type: ignore[arg-type]
    if redacted:
        from ..model import now

        storage(loom).forgetting().mark_redacted([rec["id"]], "generation", now())
