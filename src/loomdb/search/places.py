"""Where a message hit sits, so a hit explains itself: its role, when it was written,
whether it is on a side branch, and the branch's latest message below it.

* `side`: the hit is off its tree's main line, the line from the root through each
  message's first continuation (by creation), or it is a later version of a message.
  The conversation as first written is the main line; every fork is a side branch.
* `leaf`: the latest message (by creation) of the branches through the hit, where a
  page opens it (the hit's own id when nothing follows it).

One read of each hit tree's shape (`tree_shape`: ids, parents, slots, no content
parsed; a tree over `MAX_SHAPE` messages is not read) and one of the hit nodes; the hits given are already limited to what the
caller sees, so nothing here widens what they learn."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from ..storage_ops import storage

if TYPE_CHECKING:
    from ..loom import Loom
    from ..store.nodes import ShapeRow

__all__ = ["MAX_SHAPE", "describe", "placed"]

#: the largest tree whose shape a search reads to place its hits (about 12 ms for
#: 2,000 messages on SQLite): a hit in a larger tree says its role and date only
MAX_SHAPE = 20_000


def describe(loom: Loom, hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The message hits given `role`, `created_at`, `side` and `leaf` (in place)."""
    messages = [h for h in hits if h.get("kind") == "message" and h.get("tree")]
    if not messages:
        return hits
    nodes = {n.id: n for n in loom.nodes(h["entity"] for h in messages)}
    by_tree: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for h in messages:
        node = nodes.get(h["entity"])
        if node is not None:
            h["role"], h["created_at"] = node.role, node.created_at
            by_tree[h["tree"]].append(h)
    store = storage(loom)
    for tree, found in by_tree.items():
        if loom.tree(tree).nodes > MAX_SHAPE:
            continue
        places = placed(store.tree_shape(tree), [h["entity"] for h in found])
        for h in found:
            if h["entity"] in places:
                h["side"], h["leaf"] = places[h["entity"]]
    return hits


def placed(rows: list[ShapeRow], ids: list[str]) -> dict[str, tuple[bool, str]]:
    """For each of `ids` in a tree's shape (rows by creation): (on a side branch, the
    latest message below it or itself)."""
    parent = {r[0]: r[1] for r in rows}
    slot = {r[0]: r[2] for r in rows}
    order = {r[0]: i for i, r in enumerate(rows)}
    versioned = {r[0] for r in rows if r[3] is not None}
    first: dict[str | None, str] = {}  # a slot's first continuation (None: the root)
    kids: dict[str, list[str]] = defaultdict(list)  # node → nodes created under it
    for r in rows:
        p = r[1]
        if r[3] is None:
            first.setdefault(slot[p] if p is not None and p in slot else None, r[2])
        if p is not None:
            kids[p].append(r[0])
    out: dict[str, tuple[bool, str]] = {}
    for node in ids:
        if node not in parent:
            continue
        side = node in versioned
        at: str | None = node
        while not side and at is not None:
            p = parent.get(at)
            side = at in versioned or first.get(
                slot[p] if p is not None and p in slot else None) != slot[at]
            at = p if p in parent else None
        latest, stack = node, [node]
        while stack:
            n = stack.pop()
            if not kids.get(n) and order[n] > order[latest]:
                latest = n
            stack.extend(kids.get(n, ()))
        out[node] = (side, latest)
    return out
