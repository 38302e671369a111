"""Commands for agents: identities and personas, tool calls waiting for approval,
routing, subagents and supervised messages (seed 004, seed 000)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from ..errors import InvalidInput
from . import JSON, argument, emit, loom, repeatable, settings_of
from . import root as app
from .settings import providers_config
from .settings import tools_config as tools_config

if TYPE_CHECKING:
    from ..front import Door


def _door(ctx: click.Context) -> Door:
    """The operator's door under the runtime this command runs models and programs
    with: providers.toml, tools.toml and the settings read from the environment."""
    from ..front import Runtime

    lm = loom(ctx)
    return lm.as_(lm.operator, runtime=Runtime(
        config=providers_config(ctx), settings=settings_of(ctx), tools=tools_config(ctx)))


@app.group("agent")
def agent_app() -> None:
    """Agents: who writes (human or model)."""


@app.group("persona")
def persona_app() -> None:
    """Personas: identity, tool permissions, model defaults."""


@agent_app.command("add")
@argument("name")
@click.option("--kind", required=True, help="human or model.")
@click.option("--persona")
@JSON
@click.pass_context
def agent_add(ctx: click.Context, name: str, kind: str, persona: str | None,
              as_json: bool) -> None:
    """Register an agent."""
    agent = loom(ctx).agents.add_agent(name, kind, persona)
    emit(as_json, agent.to_json(), f"agent {agent.name} ({agent.kind})")


@agent_app.command("list")
@JSON
@click.pass_context
def agent_list(ctx: click.Context, as_json: bool) -> None:
    """Every agent."""
    found = [a.to_json() for a in loom(ctx).agents.list_agents()]
    emit(as_json, {"agents": found}, "\n".join(
        f"{a['name']}\t{a['kind']}\t{a['persona'] or '-'}" for a in found) or "no agents")


def _params(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InvalidInput("--param", f"expected K=V, got {pair!r}")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


@persona_app.command("set")
@argument("name")
@click.option("--system", help="Identity: a system prompt.")
@click.option("--model", help="Default model or alias.")
@repeatable("--param", help="K=V model parameter (repeatable).")
@repeatable("--allow", help="Allowed tool (repeatable; none = all).")
@repeatable("--deny", help="Denied tool (wins over --allow).")
@repeatable("--approve", help="Tool that needs a human yes.")
@JSON
@click.pass_context
def persona_set(ctx: click.Context, name: str, system: str | None, model: str | None,
                param: list[str], allow: list[str], deny: list[str], approve: list[str],
                as_json: bool) -> None:
    """Create or update a persona (lists given replace the stored ones)."""
    persona = loom(ctx).agents.set_persona(
        name, system=system, model=model, params=_params(param), allow=allow or None,
        deny=deny or None, approve=approve or None)
    emit(as_json, persona.to_json(), f"persona {persona.name}")


@persona_app.command("show")
@argument("name")
@JSON
@click.pass_context
def persona_show(ctx: click.Context, name: str, as_json: bool) -> None:
    """A persona's settings."""
    emit(as_json, loom(ctx).agents.persona(name).to_json())


@persona_app.command("list")
@JSON
@click.pass_context
def persona_list(ctx: click.Context, as_json: bool) -> None:
    """Every persona."""
    found = [p.to_json() for p in loom(ctx).agents.personas()]
    emit(as_json, {"personas": found}, "\n".join(p["name"] for p in found) or "no personas")


@app.command()
@JSON
@click.pass_context
def pending(ctx: click.Context, as_json: bool) -> None:
    """Tool calls waiting for approval."""
    found = [p.to_json() for p in loom(ctx).agents.pending()]
    emit(as_json, {"pending": found}, "\n".join(
        f"{p['node']}\t{p['session'] or '-'}\t" + ", ".join(c["name"] for c in p["calls"])
        for p in found) or "nothing pending")


@app.command("approve")
@argument("id", help="A pending tool_use node or a proposed message.")
@JSON
@click.pass_context
def approve_cmd(ctx: click.Context, id: str, as_json: bool) -> None:
    """Approve a pending tool call (it runs, the turn resumes) or a proposed message."""
    me = _door(ctx)
    if me.agents.message(id) is not None:
        msg, node = me.agents.approve_message(id)
        emit(as_json, {"message": msg.to_json(), "node": node.id}, node.id)
        return
    turn = me.agents.approve(id)
    emit(as_json, turn.to_json(), "\n".join(n.id for n in turn.nodes))


@app.command("deny")
@argument("node")
@click.option("--reason")
@JSON
@click.pass_context
def deny_cmd(ctx: click.Context, node: str, reason: str | None, as_json: bool) -> None:
    """Refuse a pending tool call: an error result is stored and the turn resumes."""
    turn = _door(ctx).agents.deny(node, reason=reason)
    emit(as_json, turn.to_json(), "\n".join(n.id for n in turn.nodes))


@app.command("route")
@click.option("--thread", help="Continue this node.")
@click.option("--session", help="This session's head.")
@click.option("--persona", help="This persona's latest session.")
@click.option("--smart", help="The session best matching this text.")
@JSON
@click.pass_context
def route_cmd(ctx: click.Context, thread: str | None, session: str | None, persona: str | None,
              smart: str | None, as_json: bool) -> None:
    """Where a message would go: {"headish", "why"}."""
    given = [(k, v) for k, v in (("thread", thread), ("session", session), ("persona", persona),
                                 ("smart", smart)) if v is not None]
    if len(given) != 1:
        raise InvalidInput("route", "give exactly one of --thread, --session, --persona, --smart")
    found = loom(ctx).agents.route(*given[0])
    emit(as_json, found.to_json(), f"{found.headish or found.new}\t{found.why}")


@app.command()
@argument("headish", help="The parent thread (a session moves to the summary).")
@click.option("--task", required=True)
@click.option("--persona")
@click.option("--max-steps", default=8)
@click.option("-m", "--model")
@click.option("--max-tokens", type=click.IntRange(min=1, max=2**31 - 1))
@JSON
@click.pass_context
def spawn(ctx: click.Context, headish: str, task: str, persona: str | None, max_steps: int,
          model: str | None, max_tokens: int | None, as_json: bool) -> None:
    """Run a task in a child tree that sees this thread; its summary comes back here."""
    done = _door(ctx).agents.spawn(headish, task, persona=persona, max_steps=max_steps,
                                   models=[model] if model else [], max_tokens=max_tokens)
    emit(as_json, done.to_json(), f"tree {done.tree}\nsession {done.session}\n"
         f"summary {done.summary_node}")


@app.command()
@argument("from_session")
@argument("to_session")
@click.option("--text", required=True)
@click.option("--supervisor", help="Default: the target's agent.")
@JSON
@click.pass_context
def propose(ctx: click.Context, from_session: str, to_session: str, text: str,
            supervisor: str | None, as_json: bool) -> None:
    """Propose a message to another session; it waits for its supervisor."""
    msg = loom(ctx).agents.propose(from_session, to_session, text, supervisor=supervisor)
    emit(as_json, msg.to_json(), msg.id)


@app.command()
@argument("supervisor")
@JSON
@click.pass_context
def inbox(ctx: click.Context, supervisor: str, as_json: bool) -> None:
    """Proposed messages waiting for SUPERVISOR."""
    found = [m.to_json() for m in loom(ctx).agents.inbox(supervisor)]
    emit(as_json, {"messages": found}, "\n".join(
        f"{m['id']}\t{m['from_session']} -> {m['to_session']}\t{m['text']}" for m in found)
        or "inbox empty")


@app.command()
@argument("id")
@click.option("--reason")
@JSON
@click.pass_context
def reject(ctx: click.Context, id: str, reason: str | None, as_json: bool) -> None:
    """Refuse a proposed message; nothing reaches its target."""
    msg = loom(ctx).agents.reject(id, reason=reason)
    emit(as_json, msg.to_json(), f"rejected {msg.id}")


@app.command()
@argument("id")
@click.option("--text", required=True)
@JSON
@click.pass_context
def amend(ctx: click.Context, id: str, text: str, as_json: bool) -> None:
    """Approve a proposed message with your own text (the original is kept in its origin)."""
    msg, node = loom(ctx).agents.amend(id, text)
    emit(as_json, {"message": msg.to_json(), "node": node.id}, node.id)
