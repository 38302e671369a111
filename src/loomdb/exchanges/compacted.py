"""A client's own compaction, recorded as a compaction node on the same path.

Coding agents compact their history themselves: pi (and Claude Code) replace the older
turns with a summary the model wrote and send the summary, then the turns they kept,
then what is new. Matched as a path, such a request is a new conversation (its second
message, the summary, was never stored) and would store the kept turns again. Instead,
when nothing of a request is known past its system messages, the gateway looks at the
answers it wrote last (`recent`, newest first, at most `LOOK`): when one of them is in
the request, and the messages between the request's first turn and it are exactly the
end of that answer's path, the first turn is the client's summary and those messages the
turns it kept. The summary becomes a compaction node after that answer (kind
`compaction`, its hyperedge sources the kept turns, as an import of the client's session
file records it), and what follows in the request goes on after it, in the same tree.

The memo maps the request's prefix through the kept turns to the compaction node (at
its own depth), so the client's next request, which sends the same summary and kept
turns again, continues there. Only answers this process wrote are looked at: after a
restart, a compacted history is matched as any request (a new path).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import NotFound
from ..headish import Position
from ..storage_ops import storage
from . import paths
from .messages import Messages, node_key

if TYPE_CHECKING:
    from ..loom import Loom
    from ..model import Node
    from ..store.areas import Unit

#: how many of the answers written last are looked at
LOOK = 16


@dataclass
class Compaction:
    """A request found to be a compaction of a stored path (module docstring)."""

    msgs: Messages
    summary: int  # the request's index of the summary
    last: int  # the request's index of the last kept turn (the stored answer)
    leaf: Node
    kept: list[Node]

    def write(self, loom: Loom, db: Unit, digests: paths.Digests
              ) -> tuple[int, str, dict[str, str], int]:
        """The compaction node after the leaf; the place the rest goes on from."""
        summary = self.msgs[self.summary]
        node = loom.append(Position(self.leaf.id, self.leaf.tree), summary.blocks, role="user",
                           kind="compaction", source="agent", origin={"via": "gateway"},
                           also=[(n.id, "context") for n in self.kept])
        anchor = storage(loom).anchor(node.id)
        assert anchor is not None
        paths.remember(db, digests.at([self.last])[self.last], node.tree, node.id,
                       anchor.depth, None)
        return self.last, node.id, {}, anchor.depth - self.last


def find(loom: Loom, msgs: Messages, recent: Sequence[str]) -> Compaction | None:
    """The compaction the request is, if it is one (module docstring)."""
    first = next((i for i, r in enumerate(msgs.roles) if r != "system"), None)
    if first is None or msgs.roles[first] != "user" or first + 1 >= len(msgs):
        return None
    where = {k: i for i, k in enumerate(msgs.keys) if i > first}
    for leaf_id in list(reversed(recent))[:LOOK]:
        leaf = _node(loom, leaf_id)
        if leaf is None:
            continue
        last = where.get(node_key(leaf.role, leaf.content))
        if last is None:
            continue
        run = last - first
        path = loom.path(leaf.id)
        if len(path) <= run:
            continue
        kept = loom.nodes(path[-run:])
        if all(node_key(n.role, n.content) == msgs.keys[first + 1 + t]
               for t, n in enumerate(kept)):
            return Compaction(msgs, first, last, leaf, kept)
    return None


def _node(loom: Loom, node_id: str) -> Any:
    try:
        return loom.node(node_id)
    except NotFound:  # forgotten since
        return None
