"""Row conversions every backend shares: hashes as bytes, JSON columns, rows -> Nodes.

Backends select node columns in the order of `NODE_COLUMNS`, so one function turns
them into `Node` values (and fetches extra sources and stored selections in one query
each, only for the rows flagged as having them).
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..model import Node
from .nodes import HAS_SELECTIONS, HAS_SOURCES, NodeStore

#: the order backends select node columns in (content id and body come from `contents`)
NODE_COLUMNS = (
    "id", "tree_id", "parent_id", "slot_id", "edited_from", "depth", "role", "kind", "author",
    "source", "content_id", "body", "options", "cache", "flags", "tokens", "total_tokens",
    "provenance", "origin", "created_at", "chain_hash",
)


def hex_to_bytes(value: str) -> bytes:
    """`sha256:<hex>` -> the 32 raw bytes stored."""
    return bytes.fromhex(value[7:])


def bytes_to_hex(value: bytes) -> str:
    return "sha256:" + bytes(value).hex()


def loads(value: str | None) -> Any:
    return None if value is None else json.loads(value)


def dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def build_nodes(store: NodeStore, rows: list[tuple[Any, ...]]) -> dict[str, Node]:
    """Nodes from rows in `NODE_COLUMNS` order, keyed by id, in the rows' order."""
    with_sel = [r[0] for r in rows if r[14] & HAS_SELECTIONS]
    with_src = [r[0] for r in rows if r[14] & HAS_SOURCES]
    selections = store.node_selections(with_sel) if with_sel else {}
    sources = store.node_sources(with_src) if with_src else {}
    out: dict[str, Node] = {}
    for r in rows:
        out[r[0]] = Node(
            id=r[0], tree=r[1], parent=r[2], slot=r[3], edited_from=r[4], depth=r[5],
            role=r[6], kind=r[7], author=r[8], source=r[9], content_id=bytes_to_hex(r[10]),
            content=json.loads(r[11]), options=loads(r[12]), cache=bool(r[13]),
            tokens=r[15], total_tokens=r[16], provenance=loads(r[17]),
            origin=loads(r[18]), created_at=r[19], chain_hash=bytes_to_hex(r[20]),
            sources=tuple(sources.get(r[0], ())), selections=selections.get(r[0], {}),
        )
    return out


@contextmanager
def gc_paused() -> Iterator[None]:
    """Reading a long thread or a whole tree allocates tens of thousands of small,
    acyclic tuples, dicts and lists; each batch of allocations triggers a cyclic-GC pass
    that finds nothing to free (a fifth of the time of a context at 10k turns, more
    than half of listing the leaves of a 100k-node tree). Pause the collector."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
