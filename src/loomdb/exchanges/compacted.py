"""A client's own compaction, recorded as a compaction node on the same path.

Coding agents compact their history themselves: they replace the older turns with a
summary the model wrote and send the summary, the turns they kept (if any), then what is
new. Matched as a path, such a request is a new conversation (its summary was never
stored) and would store the kept turns again. Instead, when nothing of a request is
known past its system messages, the gateway looks at the answers it wrote last
(`gateway_recent`, newest first, at most `LOOK`), for one of two shapes:

- pi's: one of those answers is in the request, and the messages between the request's
  first turn and it are exactly the end of that answer's path: the first turn is the
  client's summary and those messages the turns it kept. The summary becomes a
  compaction node after that answer, its hyperedge sources the kept turns;
- Claude Code's (`/compact`, or its automatic compaction): the request's first turn
  holds the summary the model wrote in one of those answers (the text inside its
  `<summary>` tags, which Claude Code sends on as "Summary: ...") and keeps no turns.
  The summarizer's request was the conversation followed by Claude Code's ask for a
  summary, so the conversation's last answer is the summary's grandparent (or, when the
  summarizer's system prompt made it a tree of its own, the recent answer in another tree
  that says the same). The compaction node goes after that last answer, holding the
  first turn's blocks up to the one with the summary; the blocks after it (what Claude
  Code merged into the same message: reminders, the new prompt) are a user node after it.

In both, the compaction node is what an import of the client's session file makes (kind
`compaction`), and what follows in the request goes on after it, in the same tree. The
memo maps the request's prefix through the summary (and kept turns) to the node that
ends it, so the client's next request, which sends the same again, continues there.

The answers looked at are kept in the store (the gateway's area), written in each
exchange's transaction, so a compaction sent after a restart of the gateway, or to
another gateway process on the same store, is found alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
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
#: how many are kept in the store
KEEP = 64
#: a summary shorter than this is not looked for (it would be found by chance)
SHORTEST = 24
_SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.DOTALL)


@dataclass
class Compaction:
    """A request found to be a compaction of a stored path (module docstring)."""

    msgs: Messages
    summary: int  # the request's index of the summary
    last: int  # the request's index of the last kept turn (the summary's when none)
    leaf: Node
    kept: list[Node]
    #: how many of the summary message's blocks the compaction node holds (all: None)
    upto: int | None = None
    also: list[tuple[str, str]] = field(default_factory=list)

    def write(self, loom: Loom, db: Unit, digests: paths.Digests
              ) -> tuple[int, str, dict[str, str], int]:
        """The compaction node after the leaf; the place the rest goes on from."""
        blocks = self.msgs.blocks(self.summary)
        held, rest = blocks[:self.upto], blocks[self.upto:] if self.upto is not None else []
        node = loom.append(Position(self.leaf.id, self.leaf.tree), held, role="user",
                           kind="compaction", source="agent", origin={"via": "gateway"},
                           also=[(n.id, "context") for n in self.kept])
        if rest:  # what the client merged into the summary's message goes on after it
            node = loom.append(Position(node.id, node.tree), rest, role="user",
                               source="human", origin={"via": "gateway"})
        anchor = storage(loom).anchor(node.id)
        assert anchor is not None
        paths.remember(db, digests.at([self.last])[self.last], node.tree, node.id,
                       anchor.depth, None)
        return self.last, node.id, {}, anchor.depth - self.last


def find(loom: Loom, db: Unit, msgs: Messages) -> Compaction | None:
    """The compaction the request is, if it is one (module docstring)."""
    first = next((i for i, r in enumerate(msgs.roles) if r != "system"), None)
    if first is None or msgs.roles[first] != "user":
        return None
    leaves = [n for n in map(lambda i: _node(loom, i), recent(db)) if n is not None]
    if first + 1 < len(msgs):
        found = _kept_turns(loom, msgs, first, leaves)
        if found is not None:
            return found
    return _summarized(loom, msgs, first, leaves)


def _kept_turns(loom: Loom, msgs: Messages, first: int, leaves: list[Node]
                ) -> Compaction | None:
    """pi's shape: summary, the stored turns it kept, what is new."""
    where = {k: i for i, k in enumerate(msgs.keys) if i > first}
    for leaf in leaves:
        last = where.get(node_key(leaf.role, leaf.content))
        if last is None:
            continue
        run = last - first
        path = loom.path(leaf.id)
        if len(path) <= run + 1:
            continue  # nothing before the kept turns for a summary to stand for
        before, *kept = loom.nodes(path[-run - 1:])
        if node_key(before.role, before.content) == msgs.keys[first]:
            continue  # the path itself, re-sent (its memo lost): not a summary
        if all(node_key(n.role, n.content) == msgs.keys[first + 1 + t]
               for t, n in enumerate(kept)):
            return Compaction(msgs, first, last, leaf, kept)
    return None


def _summarized(loom: Loom, msgs: Messages, first: int, leaves: list[Node]
                ) -> Compaction | None:
    """Claude Code's shape: the first turn holds a recent answer's summary."""
    blocks = msgs.blocks(first)
    texts = [b.get("text") if b.get("type") == "text" else None for b in blocks]
    for answer in leaves:
        needle = summary_of(answer.content)
        if needle is None:
            continue
        at = next((i for i, t in enumerate(texts) if t and needle in t), None)
        if at is None:
            continue
        leaf = _conversation(loom, answer, leaves)
        if leaf is not None:
            return Compaction(msgs, first, first, leaf, [], upto=at + 1)
    return None


def summary_of(content: list[dict[str, Any]]) -> str | None:
    """The summary an answer wrote (inside `<summary>` tags), or None."""
    text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
    found = _SUMMARY.search(text)
    inner = found.group(1).strip() if found else None
    return inner if inner and len(inner) >= SHORTEST else None


def _conversation(loom: Loom, summary: Node, leaves: list[Node]) -> Node | None:
    """The last answer of the conversation a summary answer summarized: its grandparent
    (the summarizer was asked the conversation, then for a summary), or the recent
    answer of another tree saying the same, when the summarizer's run is a tree apart."""
    asked = _node(loom, summary.parent) if summary.parent else None
    before = _node(loom, asked.parent) if asked is not None and asked.parent else None
    if before is None or before.role != "assistant":
        return None
    key = node_key(before.role, before.content)
    for other in leaves:
        if other.tree != summary.tree and node_key(other.role, other.content) == key:
            return other
    return before  # type: ignore[no-any-return]


def recent(db: Unit) -> list[str]:
    """The answers the gateway wrote last, newest first (at most LOOK)."""
    rows = db.execute("SELECT node_id FROM gateway_recent ORDER BY at DESC LIMIT ?", (LOOK,))
    return [r[0] for r in rows]


def wrote(db: Unit, tree: str, nodes: list[str]) -> None:
    """Keep the answers just written among the recent ones (the oldest past KEEP go)."""
    top = db.one("SELECT MAX(at) FROM gateway_recent")
    at = int(top[0]) if top and top[0] is not None else 0
    db.executemany("INSERT INTO gateway_recent (node_id, tree_id, at) VALUES (?, ?, ?)",
                   [(node, tree, at + 1 + i) for i, node in enumerate(nodes)])
    db.execute("DELETE FROM gateway_recent WHERE at <= ?", (at + len(nodes) - KEEP,))


def _node(loom: Loom, node_id: str) -> Any:
    try:
        return loom.node(node_id)
    except NotFound:  # forgotten since
        return None
