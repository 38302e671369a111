"""Thread options name tools and MCP servers; they never define a program.

A program (a tool's argv, an MCP server's command, args, env or working folder) runs as
the account that runs loomdb, so it is the operator's configuration (`tools.toml`),
never data that a request, an import or a model could write. Options only name what is
configured: `{"tools": ["list_files", "spawn_subagent"], "servers": ["loom"]}`. A tool
object without a program (a name with a narrower schema or description) stays allowed.

`check` is the one check on the write path: the core Loom calls it before a new tree or
a node with options is written, so every edge (library, CLI, HTTP, MCP) refuses an
executable definition with one line and writes nothing. Options that carry one anyway
(written before this rule, or read from an imported file) are inert: nothing runs them
(the tool loop refuses them by name, see `agents/tools.py`), and `import_warnings` says
where they are in the import report.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .errors import InvalidInput

#: keys that make a tool object a program definition
PROGRAM_KEYS = ("command", "args", "env", "cwd")

_WHY = ("programs are configured by the operator in tools.toml; thread options only name "
        'them, e.g. {"tools": ["list_files"], "servers": ["loom"]}')


def programs(options: Any) -> list[str]:
    """Where `options` carry an executable definition (`tools[0].command`,
    `servers.loom`, ...); empty when they only name tools and servers."""
    if not isinstance(options, dict):
        return []
    found: list[str] = []
    tools = options.get("tools")
    items = (tools.items() if isinstance(tools, dict)
             else enumerate(tools) if isinstance(tools, list) else ())
    for key, item in items:
        if isinstance(item, dict):
            found += [f"tools[{key}].{k}" for k in PROGRAM_KEYS if k in item]
    servers = options.get("servers")
    if isinstance(servers, dict):
        found += [f"servers.{name}" for name in servers] or ["servers"]
    elif isinstance(servers, list):
        found += [f"servers[{i}]" for i, s in enumerate(servers) if not isinstance(s, str)]
    elif servers is not None:
        found.append("servers")
    return found


def check(options: Any, where: str = "options") -> None:
    """Refuse options that define a program (InvalidInput naming the first place)."""
    if not options:
        return
    found = programs(options)
    if found:
        raise InvalidInput(f"{where}.{found[0]}", _WHY)


def import_warnings(tree_options: Any, nodes: Iterable[tuple[str, Any]]) -> list[str]:
    """One warning per imported tree or node whose options carry a program definition:
    it is stored as it was (the chain hash covers it) and never runs."""
    out = []
    for what, options in (("tree", tree_options), *((f"node {n}", o) for n, o in nodes)):
        found = programs(options)
        if found:
            out.append(f"{what}: options {', '.join(found)} define a program; stored as data, "
                       "it never runs (configure programs in tools.toml)")
    return out
