"""tools.toml: the programs an agent's turn may run, defined by the operator by name.

A program runs as the account that runs loomdb, so only the operator defines one: in
`tools.toml` beside `providers.toml` (the user's own, a store folder they trusted, or
`--tools` / `$LOOMDB_TOOLS`: `loomdb.userconfig`). Thread options only name what is
defined here (see `loomdb.tool_options`):

    [tools.list_files]
    description = "List the files of the project"
    command = ["python", "list_files.py"]     # gets the call's input as JSON on stdin
    input_schema = { type = "object", properties = {} }
    env = { PROJECT = "/srv/project" }       # optional: added to the minimal environment
    cwd = "tools"                            # optional: relative to this file's folder
    timeout = 30                             # optional: seconds (default limits.tool_seconds)

    [servers.loom]                           # an MCP server over stdio
    command = "loomdb"
    args = ["--db", "store", "mcp"]
    env = { ... }, cwd = "...", timeout = ...   # optional, as for a tool

A program starts in the folder holding tools.toml (or its `cwd`) with a minimal
environment: PATH, HOME and LANG of loomdb's own, plus the entry's `env` (never a
provider's key unless the entry names it). A name may not be a built-in tool's (a
configured tool cannot shadow `spawn_subagent`); names are compared without case.
A missing file means no configured programs; a malformed one is one InvalidInput
naming the file and the key.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidInput

#: the built-in tools' names (a configured tool may not take one)
BUILTIN_NAMES = ("spawn_subagent",)
#: what providers accept as a tool name; no ':' or '/', which permission keys use
NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_TOOL_FIELDS = {"description", "command", "input_schema", "env", "cwd", "timeout"}
_SERVER_FIELDS = {"command", "args", "env", "cwd", "timeout"}


@dataclass(frozen=True)
class Program:
    """What starting a process needs besides its argv: where, with what, for how long."""

    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    #: seconds; None: the store's `limits.tool_seconds`
    timeout: float | None = None


@dataclass(frozen=True)
class ToolSpec:
    """A configured tool: its definition for the model and its argv."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    command: tuple[str, ...]
    program: Program = field(default_factory=Program)


@dataclass(frozen=True)
class ServerSpec:
    """A configured MCP server, started over stdio."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    program: Program = field(default_factory=Program)


@dataclass(frozen=True)
class ToolsConfig:
    """Every configured tool and MCP server, by name."""

    tools: Mapping[str, ToolSpec] = field(default_factory=dict)
    servers: Mapping[str, ServerSpec] = field(default_factory=dict)
    path: Path | None = None


def _strings(value: Any, where: str, *, empty: bool = True) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise InvalidInput(where, "must be a list of non-empty strings")
    if not value and not empty:
        raise InvalidInput(where, "must not be empty")
    return tuple(value)


def _program(table: Mapping[str, Any], where: str, base: Path | None) -> Program:
    env = table.get("env", {})
    if not isinstance(env, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise InvalidInput(f"{where}.env", "must be a table of NAME = \"value\" strings")
    cwd = table.get("cwd")
    if cwd is not None and (not isinstance(cwd, str) or not cwd):
        raise InvalidInput(f"{where}.cwd", "must be a folder (a string)")
    folder = Path(cwd) if cwd is not None else None
    if base is not None:
        folder = base / folder if folder is not None else base
    timeout = table.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float)
                                or not 0 < timeout < math.inf):
        raise InvalidInput(f"{where}.timeout", f"must be a number of seconds above 0, got {timeout!r}")
    return Program(dict(env), folder, None if timeout is None else float(timeout))


def _table(value: Any, where: str, allowed: set[str]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidInput(where, "must be a table")
    unknown = set(value) - allowed
    if unknown:
        raise InvalidInput(where, f"unknown keys {sorted(unknown)}; allowed: {sorted(allowed)}")
    return value


def _names(data: Mapping[str, Any], key: str, source: str) -> list[tuple[str, Any, str]]:
    tables = data.get(key, {})
    if not isinstance(tables, Mapping):
        raise InvalidInput(f"{source}: {key}", "must be a table of names")
    seen: dict[str, str] = {}
    out = []
    for name, table in tables.items():
        where = f"{source}: {key}.{name}"
        if not NAME.fullmatch(name):
            raise InvalidInput(where, "a name is 1-64 letters, digits, '_' or '-'")
        if key == "tools" and name.lower() in BUILTIN_NAMES:
            raise InvalidInput(where, "is a built-in tool's name; a configured tool cannot "
                                      "shadow a built-in")
        if name.lower() in seen:
            raise InvalidInput(where, f"the same name as {key}.{seen[name.lower()]} "
                                      "(names are compared without case)")
        seen[name.lower()] = name
        out.append((name, table, where))
    return out


def parse_tools(data: Mapping[str, Any], source: str = "tools.toml",
                base: Path | None = None) -> ToolsConfig:
    """A config from parsed TOML; `base` is the folder relative `cwd`s start from."""
    unknown = set(data) - {"tools", "servers"}
    if unknown:
        raise InvalidInput(f"{source}: {sorted(unknown)[0]}",
                           "unknown key; tools.toml has [tools.NAME] and [servers.NAME]")
    tools = {}
    for name, raw, where in _names(data, "tools", source):
        table = _table(raw, where, _TOOL_FIELDS)
        if "command" not in table:
            raise InvalidInput(f"{where}.command", "a tool needs a command (an argv list)")
        description = table.get("description", "")
        if not isinstance(description, str):
            raise InvalidInput(f"{where}.description", "must be a string")
        schema = table.get("input_schema", {"type": "object", "properties": {}})
        if not isinstance(schema, Mapping):
            raise InvalidInput(f"{where}.input_schema", "must be a JSON schema table")
        tools[name] = ToolSpec(name, description, dict(schema),
                               _strings(table["command"], f"{where}.command", empty=False),
                               _program(table, where, base))
    servers = {}
    for name, raw, where in _names(data, "servers", source):
        table = _table(raw, where, _SERVER_FIELDS)
        command = table.get("command")
        if not isinstance(command, str) or not command:
            raise InvalidInput(f"{where}.command", "a server needs a command (a string)")
        servers[name] = ServerSpec(name, command, _strings(table.get("args", []), f"{where}.args"),
                                   _program(table, where, base))
    return ToolsConfig(tools, servers)


def load_tools(path: str | Path | None) -> ToolsConfig:
    """Read tools.toml at `path`; a missing file (or None) configures nothing."""
    if path is None or not Path(path).exists():
        return ToolsConfig(path=Path(path) if path else None)
    file = Path(path)
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInput(str(path), f"not valid TOML: {exc}") from None
    except OSError as exc:
        raise InvalidInput(str(path), f"cannot be read: {exc.strerror}") from None
    config = parse_tools(data, str(path), file.resolve().parent)
    return ToolsConfig(config.tools, config.servers, file)


def lookup(names: Mapping[str, Any], name: str) -> Any:
    """The entry named `name`, compared without case (None when there is none)."""
    if name in names:
        return names[name]
    low = name.lower()
    return next((v for k, v in names.items() if k.lower() == low), None)
