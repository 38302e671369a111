"""The tools a thread offers its model, and running one call.

A thread's options name its tools and MCP servers (seed 002); what runs is defined
only by the operator, in tools.toml (`agents/config.py`):

    "tools":   ["spawn_subagent",                 a built-in tool
                "list_files",                     a tools.toml tool
                {"name": "spawn_subagent",        a name with the thread's own (narrower)
                 "input_schema": {...}}]          schema or description for the model
    "servers": ["loom"]                           tools.toml MCP servers; every tool
                                                  they list is offered

Every name is resolved before anything starts: a name that is not configured, or
options that carry a program of their own (stored before programs became
configuration, or imported), stop the turn with InvalidInput and nothing runs. The
persona's rules apply before a server is started (`permissions.may_start`). Tool names
are unique across sources (built-ins first, then tools.toml, then servers in order).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidInput
from ..limits import DEFAULT as DEFAULT_LIMITS
from ..tool_options import PROGRAM_KEYS
from .config import ServerSpec, ToolsConfig, ToolSpec, lookup
from .identities import Persona
from .mcp_client import call_tool, list_tools
from .permissions import may_start
from .results import Result as Result

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
    """One tool: its definition for the model and where it comes from."""

    name: str
    description: str
    input_schema: dict[str, Any]
    #: builtin, tool (tools.toml) or mcp
    source: str = "builtin"
    server: str | None = None
    spec: ToolSpec | None = None

    @property
    def key(self) -> str:
        """What persona rules match: `builtin:NAME`, `tool:NAME`, `mcp:SERVER/NAME`."""
        where = f"{self.server}/" if self.server is not None else ""
        return f"{self.source}:{where}{self.name}"

    def definition(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description,
                "input_schema": self.input_schema}


@dataclass
class Toolbox:
    """The tools of one thread, by name, and what running them needs."""

    tools: dict[str, Tool] = field(default_factory=dict)
    servers: dict[str, ServerSpec] = field(default_factory=dict)
    #: seconds a program may run unless its entry says otherwise
    timeout: float = DEFAULT_LIMITS.tool_seconds
    environ: Mapping[str, str] | None = None

    def definitions(self, names: list[str] | None = None) -> list[dict[str, Any]]:
        return [t.definition() for n, t in self.tools.items() if names is None or n in names]

    def key(self, name: str) -> str:
        """The permission key of a tool the model called (its bare name when unknown)."""
        tool = self.tools.get(name)
        return tool.key if tool is not None else name


def _configured(config: ToolsConfig) -> str:
    where = str(config.path) if config.path is not None else "tools.toml"
    names = ", ".join(sorted(config.tools)) or "none"
    return f"configured in {where}: {names}; built in: {', '.join(BUILTIN)}"


def _named(item: Any, where: str, config: ToolsConfig) -> Tool:
    """The tool an option item names (a name, or a name with the thread's schema)."""
    if isinstance(item, dict):
        held = [k for k in PROGRAM_KEYS if k in item]
        if held:
            raise InvalidInput(f"{where}.{held[0]}", "options never define a program (stored "
                               "or imported data does not run): configure the tool in "
                               "tools.toml and name it here")
        name = item.get("name")
    else:
        name = item
    if not isinstance(name, str) or not name:
        raise InvalidInput(where, "a tool is a name, or an object with a name")
    if name.lower() in BUILTIN:
        d = BUILTIN[name.lower()]
        tool = Tool(d["name"], d["description"], d["input_schema"])
    elif (spec := lookup(config.tools, name)) is not None:
        tool = Tool(spec.name, spec.description, dict(spec.input_schema), "tool", spec=spec)
    else:
        raise InvalidInput(where, f"no tool {name!r} ({_configured(config)})")
    if isinstance(item, dict):
        schema = item.get("input_schema") or item.get("parameters") or tool.input_schema
        if not isinstance(schema, dict):
            raise InvalidInput(f"{where}.input_schema", "must be a JSON schema object")
        description = item.get("description") or tool.description
        tool = Tool(tool.name, str(description), schema, tool.source, spec=tool.spec)
    return tool


def _servers(raw: Any, config: ToolsConfig) -> list[ServerSpec]:
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(s, str) for s in raw):
        raise InvalidInput("options.servers", "must be a list of server names; options never "
                           "define a server (stored or imported data does not run): configure "
                           "it in tools.toml [servers.NAME] and name it here")
    found = []
    for i, name in enumerate(raw):
        spec = lookup(config.servers, name)
        if spec is None:
            where = str(config.path) if config.path is not None else "tools.toml"
            names = ", ".join(sorted(config.servers)) or "none"
            raise InvalidInput(f"options.servers[{i}]",
                               f"no MCP server {name!r} (configured in {where}: {names})")
        found.append(spec)
    return found


def named(options: Mapping[str, Any], config: ToolsConfig | None
          ) -> tuple[list[Tool], list[ServerSpec]]:
    """Every tool and server the options name, resolved; nothing is started."""
    config = config or ToolsConfig()
    raw = options.get("tools") or []
    if not isinstance(raw, list):
        raise InvalidInput("options.tools", "must be a list of tool names")
    tools = [_named(item, f"options.tools[{i}]", config) for i, item in enumerate(raw)]
    return tools, _servers(options.get("servers"), config)


def toolbox(options: Mapping[str, Any], config: ToolsConfig | None = None,
            persona: Persona | None = None, *, timeout: float = DEFAULT_LIMITS.tool_seconds,
            environ: Mapping[str, str] | None = None) -> Toolbox:
    """The tools a thread's merged options offer. Every name is resolved first; then
    only the servers the persona leaves a tool of are started, to list their tools."""
    tools, servers = named(options, config)
    box = Toolbox(timeout=timeout, environ=environ)
    for tool in tools:
        box.tools.setdefault(tool.name, tool)
    box.servers = {s.name: s for s in servers if may_start(persona, s.name)}
    if box.servers:
        for server, found in list_tools(box.servers, timeout, environ).items():
            for d in found:
                box.tools.setdefault(d["name"], Tool(d["name"], d.get("description") or "",
                                                     d["input_schema"], "mcp", server=server))
    return box


Builtin = Callable[[str, dict[str, Any]], Result]


def run_tool(box: Toolbox, name: str, args: dict[str, Any], builtin: Builtin) -> Result:
    """Run one call; failures come back as error results, never as exceptions."""
    tool = box.tools.get(name)
    if tool is None:
        return Result(f"no tool {name!r} in this thread", True)
    try:
        if tool.source == "builtin":
            return builtin(name, args)
        if tool.spec is not None:
            return _run_program(box, tool.spec, args)
        if tool.server is not None:
            return call_tool(box.servers[tool.server], name, args, box.timeout, box.environ)
    except Exception as exc:  # a tool's failure is the model's to read, not a crash
        return Result(f"{type(exc).__name__}: {exc}", True)
    return Result(f"tool {name!r} has no program or server to run it", True)


def _run_program(box: Toolbox, spec: ToolSpec, args: dict[str, Any]) -> Result:
    from .programs import TimedOut, run, seconds

    try:
        done = run(spec.command, spec.program, args,
                   timeout=seconds(spec.program, box.timeout), environ=box.environ)
    except TimedOut as exc:
        return Result(f"tool {spec.name!r} {exc}", True)
    if done.returncode != 0:
        return Result(done.stderr.strip() or f"exit code {done.returncode}", True)
    return Result(done.stdout.strip())
