"""The tool loop: one turn of an agent at a position (gpt2099, seed 004).

The model answers; each `tool_use` it writes is a node; an allowed tool runs and its
`tool_result` is a node; the model continues, until it answers without a call or the
turn has taken `max_steps` model steps. A tool the persona marks for approval pauses
the turn: the `tool_use` node is left pending (a row in the agents area, so it
survives the process) until `approve` or `deny` (approvals.py) resumes it. A tool the
persona denies is never offered and never runs.

Every node of a turn carries `origin = {"turn": T, "step": k}`, where T is the node
the turn started from, so a turn's nodes group together. The options' `tool_choice`
applies to the turn's first step only; later steps are `auto`, so a forced call
cannot loop forever. A session named as the position moves with every node, by
compare-and-swap against the turn's last node: a session moved by someone else
mid-turn stops the turn with RefConflict instead of forking it silently.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..model import Node, now
from . import AGENTS
from .identities import Persona, binding, get_persona
from .permissions import decide
from .subagents import MODEL_DEPTH, start_child, summary_of
from .threads import spawn_depth, thread_context, turn_context
from .tools import Result, Toolbox, run_tool, toolbox

if TYPE_CHECKING:
    from ..loom import Loom
    from ..providers.base import Completion
    from ..providers.config import ProvidersConfig
    from .config import ToolsConfig

DEFAULT_MAX_STEPS = 8
MAX_STEPS_LIMIT = 100


@dataclass
class Plan:
    """How a turn runs; stored with a pending call so another process can resume it."""

    turn: str
    session: str | None
    persona: str | None
    models: list[str] = field(default_factory=list)
    max_steps: int = DEFAULT_MAX_STEPS
    max_tokens: int | None = None
    options: dict[str, Any] | None = None
    author: str | None = None
    steps: int = 0


@dataclass
class Turn:
    """What a turn wrote, and how it ended: `answer` (a final node), `pending` (a
    tool_use node waiting for approval) or neither (it reached max_steps)."""

    nodes: list[Node]
    answer: Node | None = None
    pending: str | None = None
    session: str | None = None
    steps: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"nodes": [n.id for n in self.nodes],
                "answer": self.answer.id if self.answer else None,
                "pending": self.pending, "session": self.session, "steps": self.steps,
                "stopped": "answer" if self.answer else "pending" if self.pending else "max_steps"}


@dataclass
class Env:
    """What a run needs beyond the store: provider settings, the configured programs
    (tools.toml; None: only the built-in tools) and the environment they start from."""

    config: ProvidersConfig | None = None
    environ: Mapping[str, str] | None = None
    tools: ToolsConfig | None = None
    #: a run for a caller over HTTP: every provider body held to the allow-list
    #: (`providers.served.served_body`), this the answer's token ceiling
    served: int | None = None

    @classmethod
    def of(cls, loom: Loom, config: ProvidersConfig | None = None,
           environ: Mapping[str, str] | None = None, tools: ToolsConfig | None = None,
           served: int | None = None) -> Env:
        """A run's needs, the environment being the call's own or else the one the
        store was opened with (`loom.settings`: API keys, the local model's threads)."""
        return cls(config, loom.settings.environ if environ is None else environ, tools,
                   served)


def check_steps(max_steps: int) -> int:
    if not isinstance(max_steps, int) or not 1 <= max_steps <= MAX_STEPS_LIMIT:
        raise InvalidInput("--max-steps", f"must be between 1 and {MAX_STEPS_LIMIT}, got {max_steps}")
    return max_steps


def run_turn(
    loom: Loom, at: str, *, models: list[str] | tuple[str, ...] = (),
    max_steps: int = DEFAULT_MAX_STEPS, persona: str | None = None,
    max_tokens: int | None = None, options: dict[str, Any] | None = None,
    config: ProvidersConfig | None = None, environ: Mapping[str, str] | None = None,
    tools: ToolsConfig | None = None, served: int | None = None,
) -> Turn:
    """Run an agent's turn at `at` (a session moves with it) until it answers,
    pauses for an approval, or takes `max_steps` model steps. The tools and servers
    the thread names are resolved against `tools` (tools.toml) before anything runs."""
    check_steps(max_steps)
    pos = loom.resolve(at)
    bound = binding(loom, pos.session)
    name = persona or bound.persona
    if name is not None:
        get_persona(loom, name)
    plan = Plan(pos.node, pos.session, name, list(models), max_steps, max_tokens, options,
                bound.agent)
    return proceed(loom, plan, pos.node, Env.of(loom, config, environ, tools, served), [])


def proceed(loom: Loom, plan: Plan, last: str, env: Env, written: list[Node]) -> Turn:
    """Model steps from node `last` until an answer, a pause, or the step limit."""
    persona = get_persona(loom, plan.persona) if plan.persona else None
    while plan.steps < plan.max_steps:
        box, ctx = prepare_step(loom, plan, last, persona, env)
        answer = _ask(loom, plan, ctx, env)
        calls = [b for b in answer.content if b["type"] == "tool_use"]
        paused = any(decide(persona, box.key(c["name"])) == "approve" for c in calls)
        with loom.unit(AGENTS):  # the node and its pending row commit together
            node = _store(loom, plan, last, ctx, answer)
            plan.steps += 1
            if paused:
                hold(loom, plan, node, calls)
        written.append(node)
        last = node.id
        if not calls:
            return Turn(written, answer=node, session=plan.session, steps=plan.steps)
        if paused:
            return Turn(written, pending=node.id, session=plan.session, steps=plan.steps)
        results = [run_call(loom, plan, box, persona, c, env, last) for c in calls]
        written.append(write_results(loom, plan, last, results))
        last = written[-1].id
    return Turn(written, session=plan.session, steps=plan.steps)


def prepare_step(loom: Loom, plan: Plan, last: str, persona: Persona | None,
                 env: Env | None = None) -> tuple[Toolbox, dict[str, Any]]:
    """The toolbox and the provider context for the next step (the persona's rules
    apply before any server is started)."""
    ctx = turn_context(loom, last, persona, plan.options)
    options = dict(ctx["options"])
    box = tools_of(loom, options, persona, env or Env.of(loom))
    offered = [n for n, t in box.tools.items() if decide(persona, t.key) != "deny"]
    options.pop("servers", None)
    options.pop("tools", None)
    if offered:
        options["tools"] = box.definitions(offered)
        if plan.steps > 0:
            options["tool_choice"] = "auto"
    else:
        options.pop("tool_choice", None)
    return box, {"messages": ctx["messages"], "options": options}


def tools_of(loom: Loom, options: dict[str, Any], persona: Persona | None,
             env: Env) -> Toolbox:
    """The thread's toolbox under the store's time limit for programs."""
    return toolbox(options, env.tools, persona, timeout=loom.limits.tool_seconds,
                   environ=env.environ)


def _ask(loom: Loom, plan: Plan, ctx: dict[str, Any], env: Env) -> Completion:
    """One model answer for the step (nothing is written yet)."""
    from ..generation import pick_models
    from ..providers.clients import complete_many

    persona_model = get_persona(loom, plan.persona).model if plan.persona else None
    names = plan.models or ([persona_model] if persona_model else [])
    [spec] = pick_models(loom, names[:1], ctx, env.config, env.environ)
    [result] = complete_many([(spec, ctx)], 1, max_tokens=plan.max_tokens, environ=env.environ,
                             blob_reader=loom.blob, served=env.served)
    assert not isinstance(result, Exception)
    return result[0]


def _store(loom: Loom, plan: Plan, last: str, ctx: dict[str, Any], answer: Completion) -> Node:
    """The answer as a node after `last`, with its provenance record."""
    from ..generation import record

    provenance = record(loom, loom.resolve(last).tree, ctx, answer)
    return _append(loom, plan, last, answer.content, "assistant", plan.steps,
                   author=plan.author or answer.alias or answer.model, provenance=provenance,
                   tokens=(answer.usage or {}).get("output_tokens"))


def _append(loom: Loom, plan: Plan, last: str, content: list[dict[str, Any]], role: str,
            step: int, **fields: Any) -> Node:
    """Append after the turn's last node; the session, if any, moves by compare-and-swap."""
    origin = {"turn": plan.turn, "step": step}
    if plan.session is not None:
        return loom.append(plan.session, content, role=role, source="agent", origin=origin,
                           expect=last, **fields)
    return loom.append(last, content, role=role, source="agent", origin=origin, **fields)


def run_call(loom: Loom, plan: Plan, box: Toolbox, persona: Persona | None,
          call: dict[str, Any], env: Env, at: str) -> tuple[dict[str, Any], Result]:
    """Run one call the persona allows; a denied one gets an error result, unrun."""
    if decide(persona, box.key(call["name"])) == "deny":
        return call, Result(f"tool {call['name']!r} is denied by persona {plan.persona}", True)

    def builtin(name: str, args: dict[str, Any]) -> Result:
        return spawn_tool(loom, plan, args, env, at)

    return call, run_tool(box, call["name"], call["input"], builtin)


def write_results(loom: Loom, plan: Plan, last: str,
                  results: list[tuple[dict[str, Any], Result]]) -> Node:
    """The tool node holding one result per call of the step before it."""
    blocks = [r.block(c["id"], c["name"]) for c, r in results]
    with loom.unit(AGENTS) as db:
        node = _append(loom, plan, last, blocks, "tool", plan.steps - 1, author="tools")
        for _call_block, result in results:
            if result.spawned:
                db.execute("UPDATE agent_spawns SET summary_node = ? WHERE child_tree = ?",
                           (node.id, result.spawned))
    return node


def hold(loom: Loom, plan: Plan, node: Node, calls: list[dict[str, Any]]) -> None:
    """Leave a tool_use node pending, with everything needed to resume the turn."""
    stamp = now()
    with loom.unit(AGENTS) as db:  # joins the caller's unit when there is one
        db.execute(
            "INSERT INTO agent_tool_calls (node, call_id, tree, tool, input, state, run, "
            "created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)",
            (node.id, calls[0]["id"], node.tree, ",".join(c["name"] for c in calls),
             json.dumps(calls), json.dumps(asdict(plan)), stamp, stamp),
        )


def wants_turn(loom: Loom, at: str) -> bool:
    """Whether generating at `at` is an agent's turn: its session is bound to a persona,
    or its thread offers tools (or MCP servers)."""
    pos = loom.resolve(at)
    if binding(loom, pos.session).persona is not None:
        return True
    options = thread_context(loom, pos)["options"]
    return bool(options.get("tools") or options.get("servers"))


def spawn_tool(loom: Loom, plan: Plan, args: dict[str, Any], env: Env, at: str) -> Result:
    """`spawn_subagent` called by a model: the summary comes back as the tool's result."""
    task = args.get("task")
    if not isinstance(task, str) or not task.strip():
        return Result("spawn_subagent needs a task", True)
    if spawn_depth(loom, loom.resolve(at).tree) >= MODEL_DEPTH:
        return Result(f"spawn_subagent: a model's subagents nest at most {MODEL_DEPTH} deep;"
                      " do the task yourself", True)
    try:
        tree, session = start_child(loom, at, task, plan.persona)
    except InvalidInput as exc:
        return Result(str(exc), True)
    turn = run_turn(loom, session, models=plan.models, max_steps=plan.max_steps,
                    max_tokens=plan.max_tokens, config=env.config, environ=env.environ,
                    tools=env.tools, served=env.served)
    return Result(summary_of(loom, turn), spawned=tree)
