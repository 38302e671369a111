"""Subagents (seed 000 use case 1, seed 004 manager/worker): a child tree whose
context starts with the parent's path, read through and never copied (threads.py),
runs a task with the model and tools; its summary returns as a node in the parent's
thread.

Both directions are recorded: the child tree's lineage names the parent tree, node and
session (`{"spawned": {...}}`); the agents area lists the children of a parent node
(`children`), with the node that carried the summary back; the summary node's origin
names the child tree and session.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..content import plain_text
from ..errors import InvalidInput
from ..headish import Position
from ..model import Node, new_id, now
from ..storage_ops import storage
from . import AGENTS
from .identities import bind_session, binding, get_persona
from .threads import spawn_depth, spawn_point, spawned_from

#: how deep subagents may nest (a guard against a model spawning without end)
MAX_DEPTH = 8
#: how deep a model may nest subagents itself with `spawn_subagent` (a subagent a model
#: started may start one more; deeper, the call answers an error and no model runs):
#: a small model offered the tool at every level calls it at every level
MODEL_DEPTH = 2

if TYPE_CHECKING:
    from ..loom import Loom
    from .loop import Turn


def start_child(loom: Loom, at: str, task: str, persona: str | None,
                on_child: Callable[[str], None] | None = None) -> tuple[str, str]:
    """Create the child tree (its root is the task) and its session; (tree, session).
    `on_child` runs with the tree's id inside the same transaction."""
    if not isinstance(task, str) or not task.strip():
        raise InvalidInput("--task", "give the subagent a task")
    pos = loom.resolve(at)
    if spawn_depth(loom, pos.tree) >= MAX_DEPTH:
        raise InvalidInput("spawn", f"subagents nest at most {MAX_DEPTH} deep")
    name = persona or binding(loom, pos.session).persona
    if name is not None:
        get_persona(loom, name)
    session = f"spawn-{new_id().lower()}"
    lineage = {"spawned": {"tree": pos.tree, "node": pos.node, "session": pos.session}}
    with loom.unit(AGENTS) as db:
        tree, _root = loom.new_tree(task, title=f"subagent: {task}"[:60], session=session,
                                    lineage=lineage, source="agent", author=f"subagent:{session}")
        db.execute("INSERT INTO agent_spawns (child_tree, parent_tree, parent_node, session, "
                   "task, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                   (tree.id, pos.tree, pos.node, session, task, now()))
        if name is not None:
            bind_session(loom, session, persona=name)
        if on_child is not None:
            on_child(tree.id)
    return tree.id, session


def summary_of(loom: Loom, turn: Turn) -> str:
    """The child's last words: its answer, or why it stopped without one."""
    if turn.pending is not None:
        return f"(waiting for approval of tool call {turn.pending})"
    last = turn.answer or (turn.nodes[-1] if turn.nodes else None)
    text = plain_text(last.content).strip() if last is not None else ""
    return text if turn.answer is not None else f"(stopped after {turn.steps} steps) {text}"


def report_back(loom: Loom, turn: Turn) -> Node | None:
    """The child's summary as a node in its parent's thread, once the child's turn is
    done (an answer, or the step limit); None while it waits for an approval (the
    summary arrives when an approval lets it finish: `approvals` calls this again),
    or when the turn is not a spawned child's with a summary still to deliver (a
    child a model spawned reports as that tool call's result instead)."""
    if turn.pending is not None or turn.session is None or not turn.nodes:
        return None
    with loom.unit(AGENTS) as db:  # one transaction: the check, the node, the mark
        row = db.one("SELECT child_tree, task FROM agent_spawns WHERE session = ? AND "
                     "child_tree = ? AND summary_node IS NULL",
                     (turn.session, turn.nodes[-1].tree))
        if row is None:
            return None
        tree, task = row
        at = report_to(loom, tree)
        if at is None:
            return None
        origin = {"subagent": {"tree": tree, "session": turn.session, "task": task}}
        node = loom.append(at, f"Subagent report ({task}): {summary_of(loom, turn)}",
                           role="user", source="agent", author=f"subagent:{turn.session}",
                           origin=origin)
        db.execute("UPDATE agent_spawns SET summary_node = ? WHERE child_tree = ?",
                   (node.id, tree))
    return node


def report_to(loom: Loom, child: str) -> Position | None:
    """Where a child's report goes: its parent's session when the lineage names one that
    is still a session of the parent's tree (it moves there), else right after the
    node the child was spawned from; both followed as stored references (exact name,
    exact id, a tree the child's readers may read: `threads.spawn_point`), and None
    when the lineage names nothing that may be followed."""
    point = spawn_point(loom, child)
    if point is None:
        return None
    name = (spawned_from(loom, child) or {}).get("session")
    ref = storage(loom).find_ref(name) if isinstance(name, str) else None
    if ref is None or ref.kind != "session" or ref.tree != point.tree:
        return point
    session = ref
    return loom.resolve(session.name, names=lambda _base: (session.node, session))


@dataclass(frozen=True)
class Child:
    tree: str
    session: str
    task: str
    summary_node: str | None
    created_at: str

    def to_json(self) -> dict[str, Any]:
        return {"tree": self.tree, "session": self.session, "task": self.task,
                "summary_node": self.summary_node, "created_at": self.created_at}


def children(loom: Loom, at: str) -> list[Child]:
    """The subagents spawned from a node, oldest first."""
    node = loom.resolve(at).node
    with loom.unit(AGENTS) as db:
        rows = db.execute("SELECT child_tree, session, task, summary_node, created_at "
                          "FROM agent_spawns WHERE parent_node = ? ORDER BY created_at", (node,))
    return [Child(*r) for r in rows]


def spawned_at(loom: Loom, nodes: Sequence[str]) -> dict[str, list[Child]]:
    """The subagents spawned from each of `nodes` (a page of a thread), oldest first, in
    one query; none on a store without the agents area (nothing is created to ask)."""
    if not nodes or not loom.has_area(AGENTS):
        return {}
    out: dict[str, list[Child]] = {}
    with loom.unit(AGENTS) as db:
        rows = db.execute("SELECT parent_node, child_tree, session, task, summary_node, "
                          "created_at FROM agent_spawns WHERE parent_node IN "
                          f"({', '.join('?' * len(nodes))}) ORDER BY created_at", tuple(nodes))
    for parent, *rest in rows:
        out.setdefault(parent, []).append(Child(*rest))
    return out


def record_imported(loom: Loom, spawned: Mapping[str, Any]) -> None:
    """Record a subagent's tree brought in by an import (a coding agent's session) as
    `start_child` records one it runs, so `children` lists it; once per child tree (its
    summary node filled in when a later import brings the run's result)."""
    with loom.unit(AGENTS) as db:
        known = db.execute("SELECT summary_node FROM agent_spawns WHERE child_tree = ?",
                           (spawned["tree"],))
        if known:
            if known[0][0] is None and spawned["summary_node"] is not None:
                # the run was imported while it ran; its result has come back since
                db.execute("UPDATE agent_spawns SET summary_node = ? WHERE child_tree = ?",
                           (spawned["summary_node"], spawned["tree"]))
            return
        db.execute("INSERT INTO agent_spawns (child_tree, parent_tree, parent_node, session, "
                   "task, summary_node, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                   (spawned["tree"], spawned["parent_tree"], spawned["parent_node"],
                    spawned["session"], spawned["task"], spawned["summary_node"], now()))
