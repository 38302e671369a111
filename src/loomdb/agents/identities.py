"""Agents (who writes), personas (identity + permissions + model defaults) and the
binding of a session to a persona and an agent (seed 004)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, NotFound, check_choice
from ..model import now
from ..refs import check_name
from ..tool_options import check as check_tool_options
from . import AGENTS

if TYPE_CHECKING:
    from ..loom import Loom

AGENT_KINDS = ("human", "model")


@dataclass(frozen=True)
class Agent:
    """An identity that writes nodes: a human or a model, optionally with a persona."""

    name: str
    kind: str
    persona: str | None
    created_at: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "persona": self.persona,
                "created_at": self.created_at}


@dataclass(frozen=True)
class Persona:
    """Identity + permissions + model defaults, applied to the sessions bound to it.

    `allow` empty means every tool; `deny` wins over `allow`; `approve` lists tools that
    wait for a human yes before they run. `*` in a list matches every tool."""

    name: str
    system: str | None = None
    model: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    approve: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "system": self.system, "model": self.model,
                "params": self.params, "allow": list(self.allow), "deny": list(self.deny),
                "approve": list(self.approve)}


@dataclass(frozen=True)
class Binding:
    """Which persona and agent a session belongs to."""

    session: str
    persona: str | None
    agent: str | None


def add_agent(loom: Loom, name: str, kind: str, persona: str | None = None) -> Agent:
    """Register an agent; its name is unique in the store."""
    check_name(name)
    check_choice("agent kind", kind, AGENT_KINDS)
    with loom.unit(AGENTS) as db:
        if persona is not None:
            get_persona(loom, persona)
        if db.one("SELECT 1 FROM agents WHERE name = ?", (name,)):
            raise InvalidInput(f"agent {name!r}", "already exists")
        agent = Agent(name, kind, persona, now())
        db.execute("INSERT INTO agents VALUES (?, ?, ?, ?)", (name, kind, persona, agent.created_at))
    return agent


def agents(loom: Loom) -> list[Agent]:
    with loom.unit(AGENTS) as db:
        rows = db.execute("SELECT name, kind, persona, created_at FROM agents ORDER BY name")
    return [Agent(*r) for r in rows]


def get_agent(loom: Loom, name: str) -> Agent | None:
    with loom.unit(AGENTS) as db:
        row = db.one("SELECT name, kind, persona, created_at FROM agents WHERE name = ?", (name,))
    return Agent(*row) if row else None


def set_persona(
    loom: Loom, name: str, *, system: str | None = None, model: str | None = None,
    params: dict[str, Any] | None = None, allow: list[str] | None = None,
    deny: list[str] | None = None, approve: list[str] | None = None,
) -> Persona:
    """Create a persona or update the fields given (lists replace, params merge)."""
    check_name(name)
    for where, value in (("system", system), ("model", model)):
        if value is not None and not isinstance(value, str):
            raise InvalidInput(f"persona {name}: {where}", "must be text")
    if params is not None and not isinstance(params, dict):
        raise InvalidInput(f"persona {name}: params", "must be a JSON object")
    check_tool_options(params, f"persona {name}: params")
    for where, tools in (("allow", allow), ("deny", deny), ("approve", approve)):
        for tool in tools or ():
            if not isinstance(tool, str) or not tool.strip():
                raise InvalidInput(f"persona {name}: {where}", f"bad tool name {tool!r}")
    with loom.unit(AGENTS) as db:
        old = _persona(db, name) or Persona(name)
        new = Persona(
            name, system if system is not None else old.system,
            model if model is not None else old.model, {**old.params, **(params or {})},
            tuple(allow) if allow is not None else old.allow,
            tuple(deny) if deny is not None else old.deny,
            tuple(approve) if approve is not None else old.approve,
        )
        spec = json.dumps({k: v for k, v in new.to_json().items() if k != "name"})
        db.execute("DELETE FROM agent_personas WHERE name = ?", (name,))
        db.execute("INSERT INTO agent_personas VALUES (?, ?, ?)", (name, spec, now()))
    return new


def _persona(db: Any, name: str) -> Persona | None:
    row = db.one("SELECT spec FROM agent_personas WHERE name = ?", (name,))
    if row is None:
        return None
    spec = json.loads(row[0])
    return Persona(name, spec["system"], spec["model"], spec["params"], tuple(spec["allow"]),
                   tuple(spec["deny"]), tuple(spec["approve"]))


def get_persona(loom: Loom, name: str) -> Persona:
    with loom.unit(AGENTS) as db:
        found = _persona(db, name)
        if found is None:
            names = [r[0] for r in db.execute("SELECT name FROM agent_personas ORDER BY name")]
            raise NotFound("persona", name, names)
    return found


def personas(loom: Loom) -> list[Persona]:
    with loom.unit(AGENTS) as db:
        names = [r[0] for r in db.execute("SELECT name FROM agent_personas ORDER BY name")]
        return [p for n in names if (p := _persona(db, n)) is not None]


def bind_session(
    loom: Loom, session: str, *, persona: str | None = None, agent: str | None = None
) -> Binding:
    """Bind a session to a persona and/or an agent (the fields given replace)."""
    loom.ref(session)  # must exist
    with loom.unit(AGENTS) as db:
        if persona is not None:
            get_persona(loom, persona)
        if agent is not None and get_agent(loom, agent) is None:
            raise NotFound("agent", agent, [a.name for a in agents(loom)])
        old = binding(loom, session)
        new = Binding(session, persona if persona is not None else old.persona,
                      agent if agent is not None else old.agent)
        db.execute("DELETE FROM agent_sessions WHERE session = ?", (session,))
        db.execute("INSERT INTO agent_sessions VALUES (?, ?, ?, ?)",
                   (session, new.persona, new.agent, now()))
    return new


def binding(loom: Loom, session: str | None) -> Binding:
    """A session's persona and agent (both None when it is not bound)."""
    if session is None:
        return Binding("", None, None)
    with loom.unit(AGENTS) as db:
        row = db.one("SELECT persona, agent FROM agent_sessions WHERE session = ?", (session,))
    return Binding(session, *(row or (None, None)))


def sessions_of(loom: Loom, persona: str) -> list[str]:
    """Sessions bound to a persona, most recently bound first."""
    with loom.unit(AGENTS) as db:
        rows = db.execute("SELECT session FROM agent_sessions WHERE persona = ? "
                          "ORDER BY updated_at DESC", (persona,))
    return [r[0] for r in rows]
