"""Fixtures for the agent tests: a command tool that counts its runs in a file, and
thread options that offer it (forced, so a 135M model calls it reliably: the local
model's answer is constrained by a JSON-schema grammar, not canned)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

TALLY = Path(__file__).parent.parent / "fixtures" / "tools" / "tally.py"


class Tally:
    """The `tally` tool: every run appends one line to `file`."""

    def __init__(self, folder: Path) -> None:
        self.file = folder / "tally.txt"

    def runs(self) -> int:
        return len(self.file.read_text().splitlines()) if self.file.exists() else 0

    def tool(self) -> dict[str, Any]:
        return {"name": "tally", "description": "Count one visit.",
                "input_schema": {"type": "object",
                                 "properties": {"what": {"type": "string", "enum": ["visit"]}},
                                 "required": ["what"]},
                "command": [sys.executable, str(TALLY), str(self.file)]}

    def options(self, choice: Any = "required", **more: Any) -> dict[str, Any]:
        """Thread options that offer the tool (and force a call on the first step)."""
        return {"tools": [self.tool()], "tool_choice": choice, "seed": 7,
                "temperature": 0, **more}


@pytest.fixture
def tally(tmp_path: Path) -> Tally:
    return Tally(tmp_path)
