"""Merging a branch's outcome back: one node appended to the line merged into.

`merge BRANCH INTO` appends to INTO a user message whose sources are INTO's head (its
parent, the primary source) and BRANCH's tip (role `context`, seed 001's hyperedge):
context assembly brings the tip's message in just before the merge node, so the model
reads the branch's last message, then the merge note, which says so and carries, as
asked, nothing more (the branch's last message is the outcome), the user's text, or a
model's summary of the branch since the common ancestor. Nothing of the branch is
copied; the chain hash of the merge node covers the tip's, and its origin records
`merged_from` (the branch's ref and tip, the common ancestor, how many messages the
branch added since, what the note carries).

Merging the same tip into a line whose path already holds a merge of it answers that
merge and writes nothing. Only the two paths' ends after their common ancestor are
read (`climb`, else `parting`), so a merge costs about an append on paths of any
length. A branch already on INTO's path has nothing to merge; a branch of another
tree is refused (a continuation stays in its tree).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..storage_ops import storage
from ..store.base import FLAGS, HAS_SOURCES, ID, SLOT

if TYPE_CHECKING:
    from ..headish import Position
    from ..loom import Loom
    from ..model import Node
    from .summary import Summary

Row = tuple[Any, ...]

#: how many messages back a merge climbs from each end before it reads whole paths
CLIMB = 64
#: how many messages back the one-query climb reads from each end (`near`): most
#: branches part a few messages from their ends
NEAR = 8


def parting(lm: Loom, a: Position, b: Position) -> tuple[str | None, list[Row], list[Row]]:
    """(the common ancestor's id, a's rows after it, b's rows after it) for two paths
    of one tree, read from their ends: the deepest depth at which both hold the same
    slot (from there down they hold the same slots), found by walking back a window
    that grows until they meet. Paths parting near their heads cost two short walks
    however long they are."""
    st = storage(lm)
    ends = [st.anchor(a.node), st.anchor(b.node)]
    if ends[0] is None or ends[1] is None:
        raise InvalidInput("path", "a node named is not stored")
    window = 32
    while True:
        low = max(0, min(ends[0].depth, ends[1].depth) - window)
        ra, rb = st.path_end(a, low), st.path_end(b, low)
        shared = 0
        for x, y in zip(ra, rb, strict=False):
            if x[SLOT] != y[SLOT]:
                break
            shared += 1
        if shared or low == 0:
            return (ra[shared - 1][ID] if shared else None), ra[shared:], rb[shared:]
        window *= 4


def climb(lm: Loom, a: str, b: str, steps: int = CLIMB) -> tuple[Node, list[Node], list[Node]] | None:
    """(the common ancestor, a's nodes after it, b's nodes after it, each deepest
    first), found by climbing parents from both ends (slots compare alike whichever
    version a path selects); None when they part more than `steps` messages back."""
    st = storage(lm)
    found = st.nodes_by_id([a, b])
    if a not in found or b not in found:
        raise InvalidInput("merge", "a node named is not stored")
    x, y = found[a], found[b]
    xs: list[Node] = []
    ys: list[Node] = []
    for _ in range(steps):
        if x.slot == y.slot:
            return x, xs, ys
        move_x, move_y = x.depth >= y.depth, y.depth >= x.depth
        up = [n.parent for n, move in ((x, move_x), (y, move_y)) if move]
        if None in up:
            return None
        parents = st.nodes_by_id([str(p) for p in up])
        if move_x:
            xs.append(x)
            x = parents[str(x.parent)]
        if move_y:
            ys.append(y)
            y = parents[str(y.parent)]
    return None


def near(lm: Loom, tree: str, into: str, tip: str,
         steps: int = NEAR) -> tuple[str, list[str], list[str]] | None:
    """(the common ancestor's id, INTO's nodes after it that have the tip as a context
    source, the branch's nodes after it, each deepest first) in one query, when the
    two part within `steps` messages of both ends; None otherwise. The ancestor is the
    deepest depth at which both hold the same slot, as `climb` finds it."""
    chains: dict[str, list[tuple[str, str, int, bool]]] = {into: [], tip: []}
    for start, nid, slot, depth, names in storage(lm).climb(tree, into, tip, steps, tip):
        chains[start].append((nid, slot, depth, names))
    for chain in chains.values():
        chain.sort(key=lambda n: -n[2])  # deepest first
    if into == tip:
        chains[tip] = chains[into]
    if not chains[into] or not chains[tip]:
        raise InvalidInput("merge", "a node named is not stored")
    theirs = {depth: slot for _, slot, depth, _ in chains[tip]}
    for nid, slot, depth, _ in chains[into]:
        if theirs.get(depth) == slot:
            return (nid, [n for n, _, d, names in chains[into] if d > depth and names],
                    [n for n, _, d, _ in chains[tip] if d > depth])
    return None


def merged_already(nodes: list[Node], tip: str) -> Node | None:
    """The merge of `tip` among these nodes (a path's, after where it parted), if any."""
    for node in nodes:
        if (tip, "context") in node.sources and (node.origin or {}).get("merged_from"):
            return node
    return None


def _parted(lm: Loom, into: Position, branch: Position) -> tuple[str | None, list[Node], list[Any]]:
    """(the common ancestor's id, INTO's nodes after it that may be merges of the
    branch's tip, BRANCH's messages after it): in one query when they part near their
    ends, else by climbing, else from the paths' ends."""
    close = near(lm, into.tree, into.node, branch.node)
    if close is not None:
        return close[0], lm.nodes(close[1]), close[2]
    found = climb(lm, into.node, branch.node)
    if found is not None:
        return found[0].id, found[1], found[2]
    ancestor, rows, since = parting(lm, into, branch)
    fed = [r[ID] for r in rows if r[FLAGS] & HAS_SOURCES]
    return ancestor, lm.nodes(fed), since


def merge(lm: Loom, branch: Position, into: Position, *, text: str | None = None,
          summarized: Summary | None = None) -> tuple[Node, bool]:
    """(the merge node, whether this call wrote it), in one transaction."""
    if branch.tree != into.tree:
        raise InvalidInput("merge", "the branch and the line it merges into are in "
                           "different trees; a merge stays in one tree")
    if text is not None and summarized is not None:
        raise InvalidInput("merge", "carry a text or a summary, not both")
    with storage(lm).transaction():
        tip = branch.node
        ancestor, ours, since = _parted(lm, into, branch)
        if not since:
            raise InvalidInput(f"branch {tip}", "is already on the path merged into (or "
                               "is a version of a message there); nothing to merge")
        found = merged_already(ours, tip)
        if found is not None:
            return found, False
        label = branch.ref.name if branch.ref is not None else tip
        carries = "text" if text is not None else "summary" if summarized else "answer"
        note = (f"[merged from {label} ({len(since)} messages since they parted): its "
                "last message is in the context just before this note]")
        provenance = None
        if text is not None:
            note += "\n\n" + text
        elif summarized is not None:
            note += "\n\nSummary of that branch:\n" + summarized.text
            provenance = summarized.record()
        origin = {"merged_from": {"ref": branch.ref.name if branch.ref else None,
                                  "node": tip, "ancestor": ancestor,
                                  "messages": len(since), "carries": carries}}
        node = lm.append(into, note, role="user", also=[(tip, "context")], origin=origin,
                         provenance=provenance, policy="fail")
    storage(lm).remember(node)  # (committed: the next append there starts from it)
    return node, True
