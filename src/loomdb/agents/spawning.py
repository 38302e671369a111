"""A subagent run on request (`loomdb spawn`, MCP's `spawn`): a child thread
(subagents.py) driven by one turn of the tool loop (loop.py), its summary reported back
to the parent's thread.

It sits above both: the loop runs a model's own `spawn_subagent` call with the child
parts of `subagents`, and `subagents` never needs the loop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .loop import DEFAULT_MAX_STEPS, Turn, check_steps, run_turn
from .subagents import report_back, start_child, summary_of

if TYPE_CHECKING:
    from ..loom import Loom
    from ..providers.config import ProvidersConfig
    from .config import ToolsConfig


@dataclass(frozen=True)
class Spawned:
    """A finished (or paused) subagent: its tree and session, its summary, where the
    summary landed in the parent's thread (None when it came back as a tool result, or
    while the child waits for an approval: nothing is written to the parent then)."""

    tree: str
    session: str
    summary: str
    summary_node: str | None
    turn: Turn

    def to_json(self) -> dict[str, Any]:
        return {"tree": self.tree, "session": self.session, "summary_node": self.summary_node,
                "summary": self.summary, "turn": self.turn.to_json()}


def spawn(
    loom: Loom, at: str, task: str, *, persona: str | None = None,
    max_steps: int = DEFAULT_MAX_STEPS, models: list[str] | tuple[str, ...] = (),
    max_tokens: int | None = None, config: ProvidersConfig | None = None,
    environ: Mapping[str, str] | None = None, tools: ToolsConfig | None = None,
    on_child: Callable[[str], None] | None = None, served: int | None = None,
) -> Spawned:
    """Run `task` in a child of the thread at `at`; its summary is appended there when
    the child is done (a session named as `at` moves to it). A child that stops for an
    approval writes nothing there yet: approving (or denying) its call lets it finish,
    and the summary arrives then. `on_child` runs with the child tree's id inside the
    transaction that makes it (a user's claim of it: never a child without owner)."""
    check_steps(max_steps)
    tree, session = start_child(loom, at, task, persona, on_child)
    turn = run_turn(loom, session, models=models, max_steps=max_steps, max_tokens=max_tokens,
                    config=config, environ=environ, tools=tools, served=served)
    report = report_back(loom, turn)
    return Spawned(tree, session, summary_of(loom, turn),
                   report.id if report is not None else None, turn)
