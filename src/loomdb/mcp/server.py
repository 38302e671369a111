"""The MCP server (official `mcp` SDK, stdio transport).

Tools: `context`, `append`, `fork`, `log`, `tree`, `generate`, `spawn`, `delete`,
`redact`, `forgotten`, and the memory an agent keeps (`tools_memory`: `show`, `edit`,
`bookmark`, `tag`, `search`, documents, collections, links and backlinks, pending
approvals). Resources: `loomdb://trees`, `loomdb://tree/{tree}`, `loomdb://sessions`,
`loomdb://session/{name}`, `loomdb://documents`, `loomdb://document/{name}`.

The server acts for the local operator, as the CLI does: each tool is one call to the
operator's `Door` (`loomdb.front`) plus serialization, in the shape the CLI's `--json`
and the HTTP API give. An error comes back through the one error mapper (`answers`),
and the server keeps serving. `context` answers what a model is sent there, as the
CLI and the HTTP API do; a node is the one shape of `loomdb.shapes`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..content import plain_text
from ..errors import MissingExtra
from ..front import Door, Runtime
from . import tools_memory
from .answers import resource, tool

if TYPE_CHECKING:
    from ..api import Loom

#: how many characters of a node's text a listing shows
PREVIEW = 200


def core_tools(me: Door) -> dict[str, Any]:
    """The conversation tools by name, acting through one door."""

    def context_tool(headish: str, format: str = "normalized", model: str | None = None) -> Any:
        """What a model is sent at a node or session (a persona's system prompt and a
        subagent's inherited path included): normalized, or as an `openai`,
        `anthropic` or `completion` request body."""
        return me.nodes.context(headish, format=format, model=model)

    def append_tool(headish: str, text: str, role: str = "user", author: str | None = None,
                    options: dict[str, Any] | None = None) -> Any:
        """Add a message after a node or session (a session moves to it); `options` is
        the thread's options delta (tools and servers by their configured names)."""
        node = me.nodes.append(headish, text, role=role, author=author, options=options,
                               source="human" if author is None else "agent")
        return {"node": node.id, "tree": node.tree}

    def fork_tool(headish: str, name: str) -> Any:
        """Start a new session at a node (nothing is copied)."""
        ref = me.refs.create(headish, name)
        return {"name": ref.name, "node": ref.node, "tree": ref.tree}

    def log_tool(headish: str) -> Any:
        """The conversation from the root to a node or session."""
        return {"nodes": me.nodes.path_json(headish)}

    def tree_tool(tree: str) -> Any:
        """A tree: its nodes, sessions and leaves."""
        return me.trees.outline(tree, preview=PREVIEW)

    def generate_tool(headish: str, max_steps: int = 4, max_tokens: int | None = None,
                      model: str | None = None) -> Any:
        """Let the model answer at a node or session (tools and approvals apply)."""
        turn = me.agents.turn(headish, models=[model] if model else [], max_steps=max_steps,
                              max_tokens=max_tokens)
        return {**turn.to_json(), "text": plain_text(turn.answer.content) if turn.answer else None}

    def spawn_tool(headish: str, task: str, persona: str | None = None, max_steps: int = 4,
                   max_tokens: int | None = None) -> Any:
        """Run a task in a subagent that sees this thread; its summary comes back here."""
        return me.agents.spawn(headish, task, persona=persona, max_steps=max_steps,
                               max_tokens=max_tokens).to_json()

    def delete_tool(address: str, force: bool = False, reason: str | None = None) -> Any:
        """Delete a node and everything created from it, or tree:ID, for real (refs at or
        below it refuse it unless force, which deletes them too)."""
        return me.forget.delete(address, force=force, reason=reason).to_json()

    def redact_tool(headish: str, reason: str | None = None) -> Any:
        """Erase a node's content everywhere it is stored; it stays as a [redacted] tombstone."""
        return me.forget.redact(headish, reason=reason).to_json()

    def forgotten_tool(tree: str | None = None, limit: int = 100) -> Any:
        """The record of forgetting: who, when, what, which ids, why (never content)."""
        return {"lines": me.forget.log(tree=tree, limit=limit)}

    return {"context": context_tool, "append": append_tool, "fork": fork_tool,
            "log": log_tool, "tree": tree_tool, "generate": generate_tool,
            "spawn": spawn_tool, "delete": delete_tool, "redact": redact_tool,
            "forgotten": forgotten_tool}


def build(loom: Loom, runtime: Runtime | None = None) -> Any:
    """The server object, its tools and resources bound to one open store, acting for
    its operator under `runtime` (default: the Loom's; the edge that starts the server
    gives the providers config, its environment and the programs, tools.toml, an
    agent's turn may run)."""
    try:
        from mcp.server.mcpserver import MCPServer
    except ImportError:
        raise MissingExtra("the MCP server", "mcp") from None

    me = loom.as_(loom.operator, runtime=runtime)
    server = MCPServer("loomdb", log_level="WARNING", instructions=(
        "Branching conversation memory: read a thread's context, append to it, fork it, "
        "generate, spawn; keep documents (versioned), collections, links, bookmarks and "
        "tags; search by words or meaning."))
    for name, fn in {**core_tools(me), **tools_memory.memory_tools(me)}.items():
        server.add_tool(tool(fn), name=name, description=fn.__doc__, structured_output=False)

    @server.resource("loomdb://trees", mime_type="application/json")
    @resource
    def trees_resource() -> Any:
        return [t.to_json() for t in me.trees.list()]

    @server.resource("loomdb://tree/{tree}", mime_type="application/json")
    @resource
    def tree_resource(tree: str) -> Any:
        return me.trees.outline(tree, preview=PREVIEW)

    @server.resource("loomdb://sessions", mime_type="application/json")
    @resource
    def sessions_resource() -> Any:
        return [r.to_json() for r in me.refs.list("session")]

    @server.resource("loomdb://session/{name}", mime_type="application/json")
    @resource
    def session_resource(name: str) -> Any:
        return me.refs.session(name)

    @server.resource("loomdb://documents", mime_type="application/json")
    @resource
    def documents_resource() -> Any:
        return me.documents.list()

    @server.resource("loomdb://document/{name}", mime_type="application/json")
    @resource
    def document_resource(name: str) -> Any:
        return me.documents.show(name).to_json()

    return server


def serve(loom: Loom, runtime: Runtime | None = None) -> None:
    """Serve the store over stdio until the client closes the connection."""
    build(loom, runtime).run("stdio")
