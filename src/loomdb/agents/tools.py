"""The tools a thread offers its model, and running one call.

A thread's options name its tools (seed 002):

    "tools":   ["spawn_subagent",                       a built-in tool, by name
                {"name", "description", "input_schema",
                 "command": [argv...]}]                 a program: input JSON on stdin,
                                                        its stdout is the result; without
                                                        a command, a built-in's name with
                                                        the thread's own (narrower) schema
    "servers": {"NAME": {"command": "...", "args": [...], "env": {...}}}
                                                        MCP servers started over stdio;
                                                        every tool they list is offered

A definition without `command` that is not built in cannot run here: calling it stores
an error result. Tool names are unique across all sources (the first one wins).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidInput

#: seconds a command tool or an MCP tool call may take
TOOL_TIMEOUT = 120

SPAWN_TOOL: dict[str, Any] = {
    "name": "spawn_subagent",
    "description": "Give a task to a subagent that sees this conversation; "
                   "returns its summary.",
    "input_schema": {
        "type": "object",
        "properties": {"task": {"type": "string"}},
        "required": ["task"],
    },
}
BUILTIN = {"spawn_subagent": SPAWN_TOOL}


@dataclass(frozen=True)
class Tool:
    """One tool: its definition for the model and where it runs."""

    name: str
    description: str
    input_schema: dict[str, Any]
    command: tuple[str, ...] = ()
    server: str | None = None
    builtin: bool = False

    def definition(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description,
                "input_schema": self.input_schema}


@dataclass
class Result:
    """What a tool call returned: text, and whether it is an error."""

    text: str
    is_error: bool = False
    #: the child tree, when the call spawned a subagent
    spawned: str | None = None

    def block(self, call_id: str, name: str) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id, "name": name,
                                 "content": [{"type": "text", "text": self.text}]}
        if self.is_error:
            block["is_error"] = True
        return block


@dataclass
class Toolbox:
    """The tools of one thread, by name."""

    tools: dict[str, Tool] = field(default_factory=dict)
    servers: dict[str, dict[str, Any]] = field(default_factory=dict)

    def definitions(self, names: list[str] | None = None) -> list[dict[str, Any]]:
        return [t.definition() for n, t in self.tools.items() if names is None or n in names]


def toolbox(options: Mapping[str, Any]) -> Toolbox:
    """The tools a thread's merged options offer (MCP servers are asked for theirs)."""
    box = Toolbox()
    raw = options.get("tools") or []
    if not isinstance(raw, list):
        raise InvalidInput("options.tools", "must be a list of tool names or definitions")
    for i, item in enumerate(raw):
        tool = _tool(item, f"options.tools[{i}]")
        box.tools.setdefault(tool.name, tool)
    servers = options.get("servers") or {}
    if not isinstance(servers, dict):
        raise InvalidInput("options.servers", "must be an object of NAME: {command, args}")
    for name, spec in servers.items():
        _check_server(name, spec)
        box.servers[name] = spec
    if servers:
        from .mcp_client import list_tools

        for server, found in list_tools(box.servers).items():
            for d in found:
                box.tools.setdefault(d["name"], Tool(d["name"], d.get("description") or "",
                                                     d["input_schema"], server=server))
    return box


def _tool(item: Any, where: str) -> Tool:
    if isinstance(item, str):
        if item not in BUILTIN:
            raise InvalidInput(where, f"no built-in tool {item!r} (built in: {', '.join(BUILTIN)})")
        d = BUILTIN[item]
        return Tool(d["name"], d["description"], d["input_schema"], builtin=True)
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        raise InvalidInput(where, "a tool is a built-in name or an object with a name")
    command = item.get("command") or ()
    if command and (not isinstance(command, list) or not all(isinstance(c, str) for c in command)):
        raise InvalidInput(f"{where}.command", "must be a list of strings (argv)")
    schema = item.get("input_schema") or item.get("parameters") or {"type": "object"}
    if not isinstance(schema, dict):
        raise InvalidInput(f"{where}.input_schema", "must be a JSON schema object")
    return Tool(item["name"], item.get("description") or "", schema, tuple(command),
                builtin=item["name"] in BUILTIN and not command)


def _check_server(name: str, spec: Any) -> None:
    where = f"options.servers.{name}"
    if not isinstance(spec, dict) or not isinstance(spec.get("command"), str):
        raise InvalidInput(where, "needs a command (and optionally args, env)")
    if not isinstance(spec.get("args", []), list):
        raise InvalidInput(f"{where}.args", "must be a list of strings")


Builtin = Callable[[str, dict[str, Any]], Result]


def run_tool(box: Toolbox, name: str, args: dict[str, Any], builtin: Builtin) -> Result:
    """Run one call; failures come back as error results, never as exceptions."""
    tool = box.tools.get(name)
    if tool is None:
        return Result(f"no tool {name!r} in this thread", True)
    try:
        if tool.builtin:
            return builtin(name, args)
        if tool.command:
            return _run_command(tool, args)
        if tool.server is not None:
            from .mcp_client import call_tool

            return call_tool(box.servers[tool.server], name, args)
    except Exception as exc:  # a tool's failure is the model's to read, not a crash
        return Result(f"{type(exc).__name__}: {exc}", True)
    return Result(f"tool {name!r} has no command or server to run it", True)


def _run_command(tool: Tool, args: dict[str, Any]) -> Result:
    done = subprocess.run(
        list(tool.command), input=json.dumps(args), capture_output=True, text=True,
        timeout=TOOL_TIMEOUT, check=False,
    )
    if done.returncode != 0:
        return Result(done.stderr.strip() or f"exit code {done.returncode}", True)
    return Result(done.stdout.strip())
