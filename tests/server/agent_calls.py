"""Tool calls that wait for a person, made for real: the local model (its tool call
held to a JSON-schema grammar, forced on the first step) asks for the `tally` tool,
configured in a real tools.toml, under a persona that wants approval for it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from loomdb import Loom
from loomdb.agents.config import ToolsConfig, load_tools
from loomdb.agents.identities import bind_session, set_persona
from loomdb.agents.loop import Plan, hold, run_turn
from loomdb.front import Runtime
from loomdb.users import Owner, User
from tools_file import tools_toml

TALLY = Path(__file__).parents[1] / "fixtures" / "tools" / "tally.py"
SCHEMA = {"type": "object", "properties": {"what": {"type": "string", "enum": ["visit"]}},
          "required": ["what"]}
TOKENS = 32  # a constrained tool call is about 20 tokens
PERSONA = "careful"


class Tally:
    """The `tally` tool: every run appends one line to `file`."""

    def __init__(self, folder: Path) -> None:
        self.file = folder / "tally.txt"
        self.path = tools_toml(folder / "tools.toml", {"tools": {"tally": {
            "description": "Count one visit.", "input_schema": SCHEMA,
            "command": [sys.executable, str(TALLY), str(self.file)]}}})
        self.config: ToolsConfig = load_tools(self.path)

    def runs(self) -> int:
        return len(self.file.read_text().splitlines()) if self.file.exists() else 0

    def runtime(self) -> Runtime:
        """What a server runs agents' turns with: this tool and the built-in models."""
        return Runtime(tools=self.config)

    def options(self) -> dict[str, Any]:
        return {"tools": ["tally"], "tool_choice": "required", "seed": 7, "temperature": 0}


def pause(loom: Loom, tally: Tally, session: str, *, owner: User | None = None,
          text: str = "Count one visit with the tally tool.") -> str:
    """A new tree (`owner`'s, when given) whose agent's turn waits for approval of its
    tally call; answers the waiting node."""
    set_persona(loom, PERSONA, approve=["tally"], system="Count visits with care.")
    tree, _ = loom.new_tree(text, session=session, options=tally.options(),
                            title=f"Visits {session}")
    if owner is not None:
        Owner(loom, owner).claim([tree.id])
    bind_session(loom, session, persona=PERSONA)
    turn = run_turn(loom, session, max_steps=1, max_tokens=TOKENS, tools=tally.config)
    assert turn.pending is not None, turn
    return turn.pending


def held(loom: Loom, tally: Tally, session: str) -> str:
    """A tally call waiting for approval, held as the tool loop holds one, without the
    model (whose part `pause` tests); the turn has no step left, so a decision writes
    the result and stops there. Answers the waiting node."""
    set_persona(loom, PERSONA, approve=["tally"])
    _, root = loom.new_tree("Count one visit.", session=session, options=tally.options())
    bind_session(loom, session, persona=PERSONA)
    calls = [{"type": "tool_use", "id": "toolu_1", "name": "tally", "input": {"what": "visit"}}]
    node = loom.append(session, calls, role="assistant")
    hold(loom, Plan(root.id, session, PERSONA, max_steps=1, steps=1), node, calls)
    return node.id


def serve_with_tally(backend: str, folder: Path) -> Any:
    """(store URL, Loom, base URL, Tally): a live server over a fresh store of `backend`
    whose agents' turns may run the tally tool (a context manager)."""
    from contextlib import contextmanager

    from live import serving

    import loomdb
    from loomdb.server import create_app
    from pg import store_of

    @contextmanager
    def served() -> Any:
        tally = Tally(folder)
        with store_of(backend, str(folder / "store")) as url, loomdb.open(url) as lm, \
                serving(create_app(lm, runtime=tally.runtime())) as base:
            yield url, lm, base, tally

    return served()


def tally_world(name: str) -> Any:
    """A module's `world` fixture: `serve_with_tally` once per backend for the module
    (its store in a folder named `name-<backend>`)."""
    import os

    import pytest

    backends = [b for b in os.environ.get("LOOMDB_TEST_BACKENDS", "sqlite,postgres").split(",")
                if b]

    @pytest.fixture(scope="module", params=backends)
    def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
        folder = tmp_path_factory.mktemp(f"{name}-{request.param}")
        with serve_with_tally(request.param, folder) as served:
            yield served

    return world
