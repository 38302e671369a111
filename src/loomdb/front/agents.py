"""Agents for a caller (`loom.agents`, `loom.as_(caller).agents`): an agent's turn and
a subagent at a thread the caller sees, and the tool calls waiting for a person,
listed and decided on the caller's trees only."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING

from .base import AreaDoor

if TYPE_CHECKING:
    from ..agents.approvals import Pending
    from ..agents.loop import Turn
    from ..agents.spawning import Spawned


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
                        environ=rt.environ, tools=rt.tools)

    def spawn(self, at: str, task: str, *, persona: str | None = None,
              max_steps: int | None = None, max_tokens: int | None = None) -> Spawned:
        """Run `task` in a subagent that sees the thread at `at`; its summary comes back
        there when the child is done."""
        from ..agents.loop import DEFAULT_MAX_STEPS
        from ..agents.spawning import spawn

        rt = self.runtime
        steps = DEFAULT_MAX_STEPS if max_steps is None else max_steps
        spawned = spawn(self.loom, self._at(at), task, persona=persona, max_steps=steps,
                        max_tokens=max_tokens, config=rt.config, environ=rt.environ,
                        tools=rt.tools)
        if self.sight.shared:
            with self.sight.atomic():
                self.sight.claim([spawned.tree])
        return spawned

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
                         config=rt.config, environ=rt.environ, tools=rt.tools)

    def deny(self, node: str, *, reason: str | None = None, by: str | None = None) -> Turn:
        """Refuse a pending call; the turn resumes so the model reads the refusal."""
        from ..agents import approvals as A

        rt = self.runtime
        return A.deny(self.loom, self._call(node), reason=reason, by=by or self.sight.actor,
                      config=rt.config, environ=rt.environ, tools=rt.tools)

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
