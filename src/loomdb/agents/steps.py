"""A turn's steps as they are written: what a page shows of a running turn.

Every node a turn writes carries `origin = {"turn": T, "step": k}` and hangs after the
turn's previous node, so the turn is the chain of such nodes through a given one: up
its path and down its newest continuations that belong to the same turn. Reading it
again while the turn runs (in an HTTP request, or in another process) shows each new
step as soon as it commits; `stamp` (the last node) says whether anything changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import AGENTS

if TYPE_CHECKING:
    from ..loom import Loom
    from ..model import Node

#: a turn takes at most loop.MAX_STEPS_LIMIT model steps, each a call and its results
MAX_NODES = 2 * 100 + 2
#: how many nodes of the path are read at once, back from its end
_BATCH = 16


def turn_of(node: Node) -> str | None:
    """The turn a node belongs to (None: not an agent's turn)."""
    origin = node.origin or {}
    turn = origin.get("turn")
    return turn if isinstance(turn, str) else None


def _turn(loom: Loom, node: Node) -> str | None:
    """The turn of a node or, for a person's version of one (an amended call), of the
    node it was edited from."""
    found = turn_of(node)
    if found is None and node.edited_from is not None:
        before = loom.nodes([node.edited_from])  # a stored id: by that exact id
        found = turn_of(before[0]) if before else None
    return found


def steps(loom: Loom, node: str) -> dict[str, Any]:
    """The turn through `node` (a node id): `{"turn", "steps", "state", "stamp"}`, each
    step `{"id", "step", "role", "author", "created_at", "content", "amended"}` (amended:
    a person's version of the model's call, what ran); `state` is
    `answer` (the last step answered), `pending` (a call waits for a person),
    `denied` or `open` (the turn may still write)."""
    at = loom.node(node)
    turn = _turn(loom, at)
    if turn is None:
        return {"turn": None, "steps": [], "state": "answer", "stamp": None}
    chain = _up(loom, loom.path(at.id), turn)
    while len(chain) < MAX_NODES:
        after = [n for n in loom.nodes(loom.children(chain[-1].id)) if _turn(loom, n) == turn]
        if not after:
            break
        chain.append(max(after, key=lambda n: (n.created_at, n.id)))
    last = chain[-1]
    return {"turn": turn, "steps": [_step(n) for n in chain], "state": _state(loom, last),
            "stamp": last.id}


def _up(loom: Loom, path: list[str], turn: str) -> list[Node]:
    """The turn's nodes at the end of a path, read back from its end a few at a time
    until one is not the turn's (a long thread is not read whole on every look)."""
    found: list[Node] = []
    end = len(path)
    while end > 0:
        start = max(0, end - _BATCH)
        for n in reversed(loom.nodes(path[start:end])):
            if _turn(loom, n) != turn:
                return found[::-1]
            found.append(n)
        end = start
    return found[::-1]


def _step(node: Node) -> dict[str, Any]:
    return {"id": node.id, "step": (node.origin or {}).get("step"), "role": node.role,
            "author": node.author, "created_at": node.created_at, "content": node.content,
            "amended": node.edited_from is not None}


def _state(loom: Loom, last: Node) -> str:
    calls = [b for b in last.content if b.get("type") == "tool_use"]
    if last.role == "assistant" and not calls:
        return "answer"
    if last.role == "assistant":
        with loom.unit(AGENTS) as db:
            row = db.one("SELECT state FROM agent_tool_calls WHERE node = ?", (last.id,))
        if row is not None and row[0] in ("pending", "denied"):
            return str(row[0])
    return "open"
