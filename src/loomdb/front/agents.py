"""Agents for a caller (`loom.agents`, `loom.as_(caller).agents`): an agent's turn and
a subagent at a thread the caller sees, and the tool calls waiting for a person,
listed and decided on the caller's trees only. Identities, personas, routing and the
supervised messages between sessions are the store's own settings and traffic: the
operator's alone (a user is refused, Unauthorized)."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

from .base import AreaDoor

if TYPE_CHECKING:
    from ..agents.approvals import Pending
    from ..agents.identities import Agent, Binding, Persona
    from ..agents.loop import Turn
    from ..agents.messages import Message
    from ..agents.routing import Route
    from ..agents.spawning import Spawned
    from ..model import Node

#: why a user may not touch the store's agents, personas, routes and messages
_OPERATOR_ONLY = "agents, personas and messages between sessions are the operator's"


class Agents(AreaDoor):
    """Tool calls waiting for a person: listed and decided on the caller's trees only."""

    def turn(self, at: str, *, models: tuple[str, ...] | builtins.list[str] = (),
             max_steps: int | None = None, persona: str | None = None,
             max_tokens: int | None = None) -> Turn:
        """An agent's turn at `at` (a session moves with it) until it answers, pauses
        for an approval, or takes `max_steps` model steps; tools from the runtime."""
        from ..agents.loop import DEFAULT_MAX_STEPS, run_turn

        rt = self.runtime
        steps = DEFAULT_MAX_STEPS if max_steps is None else max_steps
        return run_turn(self.loom, self._at(at), models=models, max_steps=steps,
                        persona=persona, max_tokens=max_tokens, config=rt.config,
                        environ=rt.environ, tools=rt.tools, served=self._served())

    def spawn(self, at: str, task: str, *, persona: str | None = None,
              max_steps: int | None = None, max_tokens: int | None = None,
              models: tuple[str, ...] | builtins.list[str] = ()) -> Spawned:
        """Run `task` in a subagent that sees the thread at `at`; its summary comes back
        there when the child is done."""
        from ..agents.loop import DEFAULT_MAX_STEPS
        from ..agents.spawning import spawn

        rt = self.runtime
        steps = DEFAULT_MAX_STEPS if max_steps is None else max_steps
        # a user's child tree is theirs from the transaction that makes it
        claim = self._claim if self.sight.shared else None
        return spawn(self.loom, self._at(at), task, persona=persona, max_steps=steps,
                     models=models, max_tokens=max_tokens, config=rt.config,
                     environ=rt.environ, tools=rt.tools, on_child=claim,
                     served=self._served())

    def _served(self) -> int | None:
        """For a caller over HTTP, the ceiling every model call of a turn is held to
        (`providers.served.served_body`); None in process."""
        rt = self.runtime
        return (rt.limits or self.loom.limits).answer_tokens if rt.served_only else None

    def _claim(self, tree: str) -> None:
        self.sight.claim([tree])

    def wants_turn(self, at: str) -> bool:
        """Whether generating at `at` is an agent's turn: its session is bound to a
        persona, or its thread offers tools or MCP servers."""
        from ..agents.loop import wants_turn

        return wants_turn(self.loom, self._at(at))

    def pending(self, *, include_running: bool = False) -> builtins.list[Pending]:
        """Calls waiting for a decision, oldest first."""
        from ..agents import approvals as A

        found = A.pending(self.loom, include_running=include_running)
        if not self.sight.shared:
            return found
        keep = self.sight.visible({p.tree for p in found})
        return [p for p in found if p.tree in keep]

    def approve(self, node: str, *, by: str | None = None) -> Turn:
        """Run a pending call's tools and resume its turn."""
        from ..agents import approvals as A

        rt = self.runtime
        return A.approve(self.loom, self._call(node), by=by or self.sight.actor,
                         config=rt.config, environ=rt.environ, tools=rt.tools,
                         served=self._served())

    def amend_call(self, node: str, inputs: dict[str, Any], *,
                   by: str | None = None) -> Turn:
        """Run a pending call with a person's inputs (call id -> input) and resume its
        turn; the call's node gets a version holding what ran."""
        from ..agents import approvals as A

        rt = self.runtime
        return A.amend(self.loom, self._call(node), inputs, by=by or self.sight.actor,
                       config=rt.config, environ=rt.environ, tools=rt.tools,
                       served=self._served())

    def deny(self, node: str, *, reason: str | None = None, by: str | None = None) -> Turn:
        """Refuse a pending call; the turn resumes so the model reads the refusal."""
        from ..agents import approvals as A

        rt = self.runtime
        return A.deny(self.loom, self._call(node), reason=reason, by=by or self.sight.actor,
                      config=rt.config, environ=rt.environ, tools=rt.tools,
                      served=self._served())

    def steps(self, node: str) -> dict[str, Any]:
        """The turn through `node` (a node the caller sees), step by step as written so
        far, and whether it answered, waits for a person or may still write."""
        from ..agents.steps import steps

        return steps(self.loom, self.sight.position(node).node)

    def message(self, mid: str) -> Message | None:
        """A supervised message by id, or None."""
        from ..agents import messages as M

        self.sight.operator_only(_OPERATOR_ONLY)
        return M.message(self.loom, mid)

    def approve_message(self, mid: str) -> tuple[Message, Node]:
        """Deliver a proposed message to its target session; (message, node written)."""
        from ..agents import messages as M

        self.sight.operator_only(_OPERATOR_ONLY)
        return M.approve(self.loom, mid)

    def propose(self, from_session: str, to_session: str, text: str, *,
                supervisor: str | None = None) -> Message:
        """Propose a message from one session to another; it waits for its supervisor
        (default: the target's agent)."""
        from ..agents import messages as M

        self.sight.operator_only(_OPERATOR_ONLY)
        return M.propose(self.loom, from_session, to_session, text, supervisor=supervisor)

    def inbox(self, supervisor: str | None = None) -> builtins.list[Message]:
        """Proposed messages waiting for `supervisor` (None: for anyone)."""
        from ..agents import messages as M

        self.sight.operator_only(_OPERATOR_ONLY)
        return M.inbox(self.loom, supervisor)

    def reject(self, mid: str, *, reason: str | None = None) -> Message:
        """Refuse a proposed message; nothing reaches its target."""
        from ..agents import messages as M

        self.sight.operator_only(_OPERATOR_ONLY)
        return M.reject(self.loom, mid, reason=reason)

    def amend(self, mid: str, text: str) -> tuple[Message, Node]:
        """Deliver a proposed message with the supervisor's own text instead."""
        from ..agents import messages as M

        self.sight.operator_only(_OPERATOR_ONLY)
        return M.amend(self.loom, mid, text)

    def add_agent(self, name: str, kind: str, persona: str | None = None) -> Agent:
        """Register an agent (`human` or `model`), optionally with a persona."""
        from ..agents import identities

        self.sight.operator_only(_OPERATOR_ONLY)
        return identities.add_agent(self.loom, name, kind, persona)

    def list_agents(self) -> builtins.list[Agent]:
        """Every registered agent."""
        from ..agents import identities

        self.sight.operator_only(_OPERATOR_ONLY)
        return identities.agents(self.loom)

    def set_persona(self, name: str, *, system: str | None = None, model: str | None = None,
                    params: dict[str, Any] | None = None,
                    allow: builtins.list[str] | None = None,
                    deny: builtins.list[str] | None = None,
                    approve: builtins.list[str] | None = None) -> Persona:
        """Create a persona or update the fields given (lists replace, params merge)."""
        from ..agents import identities

        self.sight.operator_only(_OPERATOR_ONLY)
        return identities.set_persona(self.loom, name, system=system, model=model,
                                      params=params, allow=allow, deny=deny, approve=approve)

    def persona(self, name: str) -> Persona:
        """A persona's settings (NotFound when there is none of that name)."""
        from ..agents import identities

        self.sight.operator_only(_OPERATOR_ONLY)
        return identities.get_persona(self.loom, name)

    def personas(self) -> builtins.list[Persona]:
        """Every persona."""
        from ..agents import identities

        self.sight.operator_only(_OPERATOR_ONLY)
        return identities.personas(self.loom)

    def route(self, kind: str, value: str) -> Route:
        """Where a message would go: continue a `thread`, a `session`'s head, a
        `persona`'s latest session, or the session `smart`ly matching a text."""
        from ..agents import routing as R

        self.sight.operator_only(_OPERATOR_ONLY)
        return R.route(self.loom, kind, value)

    def route_to(self, target: str) -> Route:
        """Where a message would go, for `KIND:VALUE` as given to `--route`."""
        from ..agents import routing as R

        return self.route(*R.parse_route(target))

    def write(self, target: Route, content: Any, **fields: Any) -> Node:
        """Add a message where `target` routes: after its headish, or as the root of a
        new tree whose new session is bound to the persona (one transaction)."""
        from ..agents import routing as R

        self.sight.operator_only(_OPERATOR_ONLY)
        return R.write(self.loom, target, content, **fields)

    def bind(self, session: str, *, persona: str | None = None,
             agent: str | None = None) -> Binding:
        """Bind a session to a persona and/or an agent (the fields given replace)."""
        from ..agents.identities import bind_session

        self.sight.operator_only(_OPERATOR_ONLY)
        return bind_session(self.loom, session, persona=persona, agent=agent)

    def _at(self, at: str) -> str:
        """A user's name resolved against what they see, handed on as the session's
        name (unique in the store) or the node's id; the operator's as given."""
        if not self.sight.shared:
            return at
        pos = self.sight.position(at)
        return pos.session or pos.node

    def _call(self, node: str) -> str:
        """The waiting node, resolved against what the caller sees."""
        return self.sight.position(node).node if self.sight.shared else node


__all__ = ["Agents"]
