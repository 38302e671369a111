"""Writing a real tools.toml for the tests that configure programs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def toml_value(value: Any) -> str:
    """A TOML value for JSON-shaped data (JSON strings and arrays are TOML's too)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(v)}"
                                for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


def tools_toml(path: Path, tables: dict[str, dict[str, dict[str, Any]]]) -> Path:
    """Write a tools.toml of `{"tools"|"servers": {NAME: {key: value}}}`."""
    lines = []
    for kind, entries in tables.items():
        for name, table in entries.items():
            lines.append(f"[{kind}.{name}]")
            lines += [f"{key} = {toml_value(value)}" for key, value in table.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
