"""What `loomdb mcp` offers, known without the `mcp` SDK and without the store: the
server's name, version and instructions, each tool's description, arguments, output
and annotations, the resources.

The server answers a client's handshake from this alone (`stdio.py`: importing the SDK
takes over a second), then hands the connection to the SDK, which must list the same
things: the SDK derives a tool's input schema from the function's signature (a pydantic
model), so `input_schema` writes the one pydantic writes for the types the tools use,
and `tests/agents/test_mcp_start.py` holds every early answer to the SDK's own.

A tool is a function answering a JSON object (its `structuredContent`, and its text)
with its `Hints`, the MCP annotations a client reads to decide what to confirm or
retry. Every tool states all four (the spec's defaults assume the worst: a tool that
does not say is taken as destructive and open-world).
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from .. import __version__

#: the server's name in the `initialize` answer (its version is loomdb's)
NAME = "loomdb"
VERSION = __version__
INSTRUCTIONS = (
    "Branching conversation memory: read a thread's context, append to it, fork it, "
    "generate, spawn; keep documents (versioned), collections, links, bookmarks and "
    "tags; search by words or meaning.")
#: what the SDK's server declares it can do (tools, resources, prompts: none listed)
CAPABILITIES: dict[str, Any] = {
    "prompts": {"listChanged": False},
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}
#: the protocol versions the SDK negotiates by `initialize` (newest last): a client's
#: version if listed, else the newest (2026-07-28 and later have no handshake)
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
#: what every resource answers
JSON_TYPE = "application/json"


class Hints(NamedTuple):
    """A tool's MCP annotations: whether it changes the store, whether what it changes
    can be lost, whether the same call again changes anything more, whether it reaches
    beyond the store (a model provider, the operator's programs)."""

    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool

    def to_json(self) -> dict[str, bool]:
        return {"readOnlyHint": self.read_only, "destructiveHint": self.destructive,
                "idempotentHint": self.idempotent, "openWorldHint": self.open_world}


#: reads the store, changes nothing
READS = Hints(read_only=True, destructive=False, idempotent=True, open_world=False)
#: adds to the store (nothing is lost); each call adds again
ADDS = Hints(read_only=False, destructive=False, idempotent=False, open_world=False)
#: adds to the store once: the same call again is refused (the name is taken, or
#: nothing changed) and changes nothing
ADDS_ONCE = Hints(read_only=False, destructive=False, idempotent=True, open_world=False)
#: a model's turn: it writes new nodes, and the thread's tools (the operator's programs
#: and MCP servers) may do anything they do, with a remote provider answering
RUNS_A_TURN = Hints(read_only=False, destructive=True, idempotent=False, open_world=True)


class Tool(NamedTuple):
    """One tool: its function (keyword arguments in, a JSON object out) and hints."""

    fn: Callable[..., dict[str, Any]]
    hints: Hints


def description(fn: Callable[..., Any]) -> str:
    """The text a client shows for a tool: its function's docstring."""
    return inspect.cleandoc(fn.__doc__ or "")


def listed(name: str, tool: Tool) -> dict[str, Any]:
    """The tool as `tools/list` answers it."""
    return {"name": name, "description": description(tool.fn),
            "inputSchema": input_schema(tool.fn), "outputSchema": output_schema(tool.fn),
            "annotations": tool.hints.to_json()}


def input_schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """The JSON schema of a tool's arguments, as the SDK's pydantic model of the
    function writes it: a title per field from its name, defaults, `X | None` as
    `anyOf` with null."""
    hints = typing.get_type_hints(fn)
    properties: dict[str, Any] = {}
    required = []
    for name, param in inspect.signature(fn).parameters.items():
        field = {**_schema(hints[name]), "title": name.title().replace("_", " ").strip()}
        if param.default is inspect.Parameter.empty:
            required.append(name)
        else:
            field["default"] = param.default
        properties[name] = field
    schema: dict[str, Any] = {"type": "object", "properties": properties,
                              "title": f"{fn.__name__}Arguments"}
    if required:
        schema["required"] = required
    return schema


def output_schema(fn: Callable[..., Any]) -> dict[str, Any]:
    """Every tool answers one JSON object (the SDK's schema of `dict[str, Any]`)."""
    return {"type": "object", "additionalProperties": True, "title": f"{fn.__name__}DictOutput"}


_SCALARS: dict[Any, str] = {str: "string", int: "integer", bool: "boolean", float: "number"}


def _schema(hint: Any) -> dict[str, Any]:
    """The schema of one argument's type (the types tools take)."""
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    if hint is Any:
        return {}
    args = typing.get_args(hint)
    origin = typing.get_origin(hint)
    if origin in (types.UnionType, typing.Union) and type(None) in args:
        return {"anyOf": [_schema(arg) if arg is not type(None) else {"type": "null"}
                          for arg in args]}
    if origin is list:
        return {"type": "array", "items": _schema(args[0])}
    if origin is dict and args[0] is str:
        inner = _schema(args[1])
        return {"type": "object", "additionalProperties": inner or True}
    raise TypeError(f"an MCP tool argument of type {hint!r} has no schema here")


class Resource(NamedTuple):
    """A resource (a template when its URI has a `{name}`)."""

    uri: str
    name: str
    description: str

    def listed(self) -> dict[str, Any]:
        key = "uriTemplate" if "{" in self.uri else "uri"
        return {key: self.uri, "name": self.name, "description": self.description,
                "mimeType": JSON_TYPE}


RESOURCES = (
    Resource("loomdb://trees", "trees", "Every tree: its id, title, root and size."),
    Resource("loomdb://tree/{tree}", "tree", "A tree: its nodes, sessions and leaves."),
    Resource("loomdb://sessions", "sessions", "Every session: its tree and the node it is at."),
    Resource("loomdb://session/{name}", "session",
             "A session: where it is, and the conversation from the root to there."),
    Resource("loomdb://documents", "documents",
             "Every versioned document, with its current branch and revision."),
    Resource("loomdb://document/{name}", "document", "A document's current text."),
)


def listings(tools: Mapping[str, Tool]) -> dict[str, dict[str, Any]]:
    """What each listing request answers."""
    return {
        "tools/list": {"tools": [listed(name, tool) for name, tool in tools.items()]},
        "resources/list": {"resources": [r.listed() for r in RESOURCES if "{" not in r.uri]},
        "resources/templates/list": {
            "resourceTemplates": [r.listed() for r in RESOURCES if "{" in r.uri]},
        "prompts/list": {"prompts": []},
    }


def initialized(version: str) -> dict[str, Any]:
    """The `initialize` answer to a client asking for protocol `version`."""
    return {"protocolVersion": version if version in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1],
            "capabilities": CAPABILITIES, "serverInfo": {"name": NAME, "version": VERSION},
            "instructions": INSTRUCTIONS}


__all__ = ["ADDS", "ADDS_ONCE", "CAPABILITIES", "HANDSHAKE_VERSIONS", "INSTRUCTIONS", "NAME",
           "READS", "RESOURCES", "RUNS_A_TURN", "VERSION", "Hints", "Resource", "Tool",
           "description", "initialized", "input_schema", "listed", "listings",
           "output_schema"]
