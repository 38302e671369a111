"""Tool calls waiting for a human: list them, approve (run and resume the turn), amend
(run them with a person's inputs) or deny (store an error result and resume).

A decision claims the call by compare-and-swap on its row (`pending` -> `running`),
committed before any tool runs, so two people approving the same call at once run
it once: the second finds it no longer pending. The result node and the row's final
state (`done`) then commit together. A claim whose process dies before that leaves
the row `running`; it is listed by `pending(..., include_running=True)`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, NotFound
from ..model import now
from . import AGENTS
from .identities import get_persona
from .loop import Env, Plan, Turn, proceed, run_call, tools_of, write_results
from .subagents import report_back
from .threads import turn_context
from .tools import Result

if TYPE_CHECKING:
    from ..loom import Loom
    from ..providers.config import ProvidersConfig
    from .config import ToolsConfig


@dataclass(frozen=True)
class Pending:
    """One paused tool_use node."""

    node: str
    tree: str
    session: str | None
    persona: str | None
    calls: list[dict[str, Any]]
    state: str
    created_at: str

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "tree": self.tree, "session": self.session,
                "persona": self.persona, "state": self.state, "created_at": self.created_at,
                "calls": [{"id": c["id"], "name": c["name"], "input": c["input"]}
                          for c in self.calls]}


_COLUMNS = "node, tree, input, run, state, created_at"


def _pending(row: tuple[Any, ...]) -> Pending:
    node, tree, calls, run, state, created = row
    plan = json.loads(run)
    return Pending(node, tree, plan["session"], plan["persona"], json.loads(calls), state, created)


def pending(loom: Loom, *, include_running: bool = False) -> list[Pending]:
    """Tool calls waiting for a decision, oldest first."""
    states = ("pending", "running") if include_running else ("pending", "pending")
    with loom.unit(AGENTS) as db:
        rows = db.execute(f"SELECT {_COLUMNS} FROM agent_tool_calls WHERE state IN (?, ?) "
                          "ORDER BY created_at", states)
    return [_pending(r) for r in rows]


def tool_call(loom: Loom, node: str) -> Pending | None:
    with loom.unit(AGENTS) as db:
        row = db.one(f"SELECT {_COLUMNS} FROM agent_tool_calls WHERE node = ?", (node,))
    return _pending(row) if row else None


def _claim(loom: Loom, headish: str, by: str, reason: str | None) -> tuple[Pending, Plan]:
    """Take a pending call for this decision, or say why it cannot be taken (never by
    listing the calls that wait: they are every user's, and a user reaches this with a
    node of their own)."""
    node = _node_id(loom, headish)
    with loom.unit(AGENTS) as db:
        rows = db.execute(
            "UPDATE agent_tool_calls SET state = 'running', decided_by = ?, reason = ?, "
            f"updated_at = ? WHERE node = ? AND state = 'pending' RETURNING {_COLUMNS}",
            (by, reason, now(), node))
    if not rows:
        found = tool_call(loom, node)
        if found is None:
            raise NotFound("pending tool call", headish)
        raise InvalidInput(f"tool call {node}", f"is {found.state}, not pending")
    row = rows[0]
    return _pending(row), Plan(**json.loads(row[3]))


def _node_id(loom: Loom, headish: str) -> str:
    if tool_call(loom, headish) is not None:
        return headish
    return loom.resolve(headish).node


def approve(
    loom: Loom, node: str, *, by: str | None = None, config: ProvidersConfig | None = None,
    environ: Mapping[str, str] | None = None, tools: ToolsConfig | None = None,
    served: int | None = None,
) -> Turn:
    """Run a pending call's tools and resume its turn (`served`: see `loop.Env`)."""
    call, plan = _claim(loom, node, by or loom.actor, None)
    return _finish(loom, call, plan, Env.of(loom, config, environ, tools, served), None)


def deny(
    loom: Loom, node: str, *, reason: str | None = None, by: str | None = None,
    config: ProvidersConfig | None = None, environ: Mapping[str, str] | None = None,
    tools: ToolsConfig | None = None, served: int | None = None,
) -> Turn:
    """Refuse a pending call: its tools that need approval get an error result, unrun;
    the turn resumes so the model can read the refusal."""
    call, plan = _claim(loom, node, by or loom.actor, reason)
    return _finish(loom, call, plan, Env.of(loom, config, environ, tools, served),
                   reason or "denied")


#: the most characters of JSON a person's amended input to one call may take
AMEND_MAX = 256 * 1024


def amend(
    loom: Loom, node: str, inputs: Mapping[str, Any], *, by: str | None = None,
    config: ProvidersConfig | None = None, environ: Mapping[str, str] | None = None,
    tools: ToolsConfig | None = None, served: int | None = None,
) -> Turn:
    """Run a pending call with a person's inputs instead of the model's (`inputs`: call
    id -> the input object), then resume its turn. The tool_use node gets a new version
    holding what will run, selected in the turn's session, so the thread and the model
    read what actually ran; the model's own version stays beside it."""
    found = tool_call(loom, _node_id(loom, node))
    if found is None:
        raise NotFound("pending tool call", node)
    _check_inputs(inputs, {c["id"] for c in found.calls})
    with loom.unit(AGENTS):  # the claim and the version commit together, before any run
        call, plan = _claim(loom, found.node, by or loom.actor, "amended")
        original = loom.node(call.node)
        content = [{**b, "input": inputs[b["id"]]}
                   if b.get("type") == "tool_use" and b.get("id") in inputs else b
                   for b in original.content]
        at: Any = call.node
        if plan.session is not None:
            here = loom.resolve(plan.session)
            if here.node == call.node:  # through the session, which then shows the version
                at = here
        loom.edit(at, content, author=by or loom.actor)
    amended = Pending(call.node, call.tree, call.session, call.persona,
                      [{**c, "input": inputs.get(c["id"], c["input"])} for c in call.calls],
                      call.state, call.created_at)
    return _finish(loom, amended, plan, Env.of(loom, config, environ, tools, served), None)


def _check_inputs(inputs: Any, ids: set[str]) -> None:
    if not isinstance(inputs, Mapping) or not inputs:
        raise InvalidInput("inputs", "give the amended input of at least one call, by its id")
    for cid, value in inputs.items():
        if cid not in ids:
            raise InvalidInput(f"inputs.{str(cid)[:40]}", "is not a call of this node")
        if not isinstance(value, dict):
            raise InvalidInput(f"inputs.{cid}", "must be a JSON object")
        if len(json.dumps(value, ensure_ascii=False)) > AMEND_MAX:
            raise InvalidInput(f"inputs.{cid}", f"is longer than {AMEND_MAX} characters of JSON")


def _finish(loom: Loom, call: Pending, plan: Plan, env: Env, refusal: str | None) -> Turn:
    from .permissions import decide

    persona = get_persona(loom, plan.persona) if plan.persona else None
    box = tools_of(loom, turn_context(loom, call.node, persona, plan.options)["options"],
                   persona, env)
    results = []
    for c in call.calls:
        if refusal is not None and decide(persona, box.key(c["name"])) == "approve":
            results.append((c, Result(f"the call was denied: {refusal}", True)))
        else:
            results.append(run_call(loom, plan, box, persona, c, env, call.node))
    with loom.unit(AGENTS) as db:
        node = write_results(loom, plan, call.node, results)
        db.execute("UPDATE agent_tool_calls SET state = ?, result_node = ?, updated_at = ? "
                   "WHERE node = ?", ("denied" if refusal else "done", node.id, now(), call.node))
    turn = proceed(loom, plan, node.id, env, [node])
    report_back(loom, turn)  # a subagent done now reports to its parent's thread
    return turn
