"""Moving through a buffer tree: the alternatives at a position, switching a ref to
another branch or version, where two paths part."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import content as C
from ..errors import InvalidInput
from ..model import Node
from ..storage_ops import storage
from ..store.base import ID, SLOT
from .document import path_texts
from .drafts import head_of, position, require_ref
from .values import Alternative, Alternatives, At, Divergence, Switched

if TYPE_CHECKING:
    from ..loom import Loom


def alternatives(loom: Loom, at: At, index: int | str) -> Alternatives:
    """The alternatives at one position of the path at `at`: `index` counts from the
    root (0) or from the head (-1), or names a node of the path."""
    pos = position(loom, at)
    rows = loom.path_rows(pos)
    ids = [r[ID] for r in rows]
    i = _index(loom, ids, index)
    chosen = ids[i]
    node = loom.node(chosen)
    if i == 0:
        slots = [node.slot]
    else:
        slots = storage(loom).slot_children(rows[i - 1][SLOT])
    picks = {s: pos.selections.get(s, s) for s in slots}
    picks[node.slot] = chosen
    versions = storage(loom).slot_versions(node.slot)
    found = storage(loom).nodes_by_id(list(picks.values()) + versions)

    def alt(nid: str) -> Alternative:
        n = found[nid]
        return Alternative(nid, n.slot, n.author, n.source, C.plain_text(n.content),
                           nid == chosen)

    return Alternatives(i, chosen, [alt(picks[s]) for s in slots], [alt(v) for v in versions])


def _index(loom: Loom, ids: list[str], index: int | str) -> int:
    if isinstance(index, str):
        name = index
        try:
            index = int(name)
        except ValueError:
            node = loom.resolve(name).node
            if node not in ids:
                raise InvalidInput(f"node {name!r}", "is not on this path") from None
            return ids.index(node)
    if not -len(ids) <= index < len(ids):
        raise InvalidInput(f"index {index}", f"the path holds {len(ids)} nodes (0..{len(ids) - 1})")
    return index % len(ids)


def switch(loom: Loom, at: At, node: At) -> Switched:
    """Make the session or view `at` show `node`.

    A version of a slot on its path is selected (the ref stays where it is). Any other
    node of the tree (typically a sibling from `alternatives`) switches the whole
    downstream path: the ref moves to the most recent leaf below that node's slot
    (selecting `node` if it is a version). The move is logged and can be undone."""
    pos = position(loom, at)
    ref = require_ref(loom, at, pos)
    target = loom.node(node)
    if target.tree != pos.tree:
        raise InvalidInput(f"node {target.id}", f"is not in the tree of {ref.name!r}")
    slots = {r[SLOT] for r in loom.path_rows(pos)}
    with storage(loom).transaction():
        selected: list[str] = []
        if target.slot in slots:
            loom.select(ref.name, target.id)
            fresh = loom.ref(ref.name)
            return Switched(ref.name, head_of(loom, fresh), False, [target.id])
        leaf = _latest_leaf(loom, target)
        current = loom.ref(ref.name)
        moved = current.node != leaf
        if moved:
            loom.set_ref(ref.name, leaf, expect=current.node)
        if target.edited_from is not None:  # its slot is on the path only after the move
            loom.select(ref.name, target.id)
            selected.append(target.id)
        return Switched(ref.name, head_of(loom, loom.ref(ref.name)), moved, selected)


def _latest_leaf(loom: Loom, target: Node) -> str:
    """The most recently written leaf at or below `target`'s slot (unpruned if any)."""
    nodes = loom.nodes(storage(loom).subtree(target.slot))
    slot_of = {n.id: n.slot for n in nodes}
    parents = {slot_of[n.parent] for n in nodes if n.parent in slot_of}
    leaves = [n for n in nodes if n.edited_from is None and n.slot not in parents]
    pruned = storage(loom).flagged(target.tree, "pruned")
    leaves = [n for n in leaves if n.id not in pruned] or leaves
    return max(leaves, key=lambda n: (n.created_at, n.id)).id


def diverge(loom: Loom, a: At, b: At) -> Divergence:
    """Where the paths at `a` and `b` part (see `Divergence`)."""
    pa, pb = loom.path_rows(position(loom, a)), loom.path_rows(position(loom, b))
    i = 0
    while i < len(pa) and i < len(pb) and pa[i][ID] == pb[i][ID]:
        i += 1
    if i == len(pa) == len(pb):
        kind = "same"
    elif i == len(pa) or i == len(pb):
        kind = "prefix"
    elif pa[i][SLOT] == pb[i][SLOT]:
        kind = "version"
    else:
        kind = "branch"
    in_a, in_b = {r[ID] for r in pa}, {r[ID] for r in pb}
    return Divergence(
        kind, i, pa[i - 1][ID] if i else None, sum(map(len, path_texts(pa[:i]))),
        [r[ID] for r in pa if r[ID] not in in_b], [r[ID] for r in pb if r[ID] not in in_a],
    )

