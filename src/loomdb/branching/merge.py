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
merge and writes nothing. A branch already on INTO's path has nothing to merge; a
branch of another tree is refused (a continuation stays in its tree).
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

#: what a merge note may carry besides the branch's last message
CARRIES = ("answer", "text", "summary")


def since_ancestor(into: list[Row], branch: list[Row]) -> tuple[str | None, list[Row]]:
    """(the common ancestor's id, the branch's rows after it): the ancestor is the last
    position the two paths share by slot, so a branch made by editing a message of
    INTO starts at that message's new version."""
    common = 0
    for a, b in zip(into, branch, strict=False):
        if a[SLOT] != b[SLOT]:
            break
        common += 1
    return (branch[common - 1][ID] if common else None), branch[common:]


def merged_already(lm: Loom, rows: list[Row], tip: str) -> Node | None:
    """The merge of `tip` on this path, if there is one."""
    fed = [r[ID] for r in rows if r[FLAGS] & HAS_SOURCES]
    if not fed:
        return None
    sources = storage(lm).node_sources(fed)
    for node_id in reversed(fed):
        if (tip, "context") in sources.get(node_id, ()):
            node = lm.node(node_id)
            if (node.origin or {}).get("merged_from"):
                return node
    return None


def merge(lm: Loom, branch: Position, into: Position, *, text: str | None = None,
          summarized: Summary | None = None) -> tuple[Node, bool]:
    """(the merge node, whether this call wrote it), in one transaction."""
    if branch.tree != into.tree:
        raise InvalidInput("merge", "the branch and the line it merges into are in "
                           "different trees; a merge stays in one tree")
    if text is not None and summarized is not None:
        raise InvalidInput("merge", "carry a text or a summary, not both")
    with storage(lm).transaction():
        into_rows = lm.path_rows(into)
        tip = branch.node
        if tip in {r[ID] for r in into_rows}:
            raise InvalidInput(f"branch {tip}", "is already on the path merged into; "
                               "nothing to merge")
        found = merged_already(lm, into_rows, tip)
        if found is not None:
            return found, False
        ancestor, since = since_ancestor(into_rows, lm.path_rows(branch))
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
    return node, True
