"""Fixtures for the agent tests: a command tool configured in a real tools.toml that
counts its runs in a file, and thread options that name it (forced, so a 135M model
calls it reliably: the local model's answer is constrained by a JSON-schema grammar,
not canned)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from loomdb.agents.config import ToolsConfig, load_tools
from tools_file import tools_toml

TALLY = Path(__file__).parent.parent / "fixtures" / "tools" / "tally.py"
#: the tally tool's input, narrowed so the grammar leaves the model one call to write
SCHEMA = {"type": "object", "properties": {"what": {"type": "string", "enum": ["visit"]}},
          "required": ["what"]}


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

    def options(self, choice: Any = "required", **more: Any) -> dict[str, Any]:
        """Thread options that name the tool (and force a call on the first step)."""
        return {"tools": ["tally"], "tool_choice": choice, "seed": 7, "temperature": 0, **more}


@pytest.fixture
def tally(tmp_path: Path) -> Tally:
    return Tally(tmp_path)
