"""Where `add`, `generate` and `session set` reach the agents area: a `--route`, an
agent's turn, a session bound to a persona or agent.

Its own module so the write, model and ref commands need not import the agent
commands (nor those import them back).
"""

from __future__ import annotations

from typing import Any

import click

from ..errors import InvalidInput
from . import emit, loom, settings_of
from .settings import tools_config


def _target(lm: Any, headish: str | None, route: str | None) -> Any:
    if (headish is None) == (route is None):
        raise InvalidInput("headish", "give a HEADISH or --route, not both")
    return lm.agents.route_to(route) if route is not None else None


def routed(lm: Any, headish: str | None, route: str | None) -> Any:
    """`add`: the append at HEADISH, or at where --route leads (a persona's first
    message starts its session)."""
    target = _target(lm, headish, route)
    if target is None:
        return lambda content, **fields: lm.append(headish, content, **fields)
    return lambda content, **fields: lm.agents.write(target, content, **fields)


def route_to(lm: Any, headish: str | None, route: str | None) -> str:
    """`generate`: HEADISH, or where --route leads (it must lead to a thread)."""
    target = _target(lm, headish, route)
    if target is None:
        return str(headish)
    if target.headish is None:
        raise InvalidInput("--route", f"{target.why}: add a message there first")
    return str(target.headish)


def agent_turn(lm: Any, headish: str, models: list[str], n: int, max_tokens: int | None,
               max_steps: int | None, persona: str | None, config: Any, as_json: bool) -> bool:
    """`generate` as an agent's turn when it is one (see `loop.wants_turn`); False
    when plain generation should run."""
    from ..front import Runtime

    if max_steps is None and persona is None and not lm.agents.wants_turn(headish):
        return False
    if n != 1 or len(models) > 1:
        raise InvalidInput("-n/--model", "an agent's turn runs one model, one answer at a time")
    ctx = click.get_current_context()
    door = lm.as_(lm.operator, runtime=Runtime(config=config, settings=settings_of(ctx),
                                               tools=tools_config(ctx)))
    turn = door.agents.turn(headish, models=models, max_steps=max_steps or None,
                            persona=persona, max_tokens=max_tokens)
    ids = [node.id for node in turn.nodes]
    emit(as_json, {"nodes": ids, **turn.to_json()}, "\n".join(ids) + (
        f"\npending {turn.pending}: loomdb approve {turn.pending}" if turn.pending else ""))
    return True


def bind(ctx: click.Context, name: str, headish: str | None, persona: str | None,
         agent: str | None, as_json: bool) -> None:
    """`session set NAME [HEADISH] --persona P --agent A`."""
    lm = loom(ctx)
    if headish is None and persona is None and agent is None:
        raise InvalidInput("session set", "give a HEADISH to move to, or --persona / --agent")
    if headish is not None:
        lm.set_ref(name, headish)
    bound = lm.agents.bind(name, persona=persona, agent=agent) if persona or agent else None
    ref = lm.ref(name)
    emit(as_json, {"name": ref.name, "node": ref.node,
                   "persona": bound.persona if bound else None,
                   "agent": bound.agent if bound else None}, f"{ref.name} -> {ref.node}")
