"""The MCP server (official `mcp` SDK, stdio transport).

Tools: `context`, `append`, `fork`, `log`, `tree`, `generate`, `spawn`, and the memory
an agent keeps (`tools_memory`: `show`, `edit`, `bookmark`, `tag`, `search`, documents,
collections, links and backlinks, pending approvals). Resources: `loomdb://trees`,
`loomdb://tree/{tree}`, `loomdb://sessions`, `loomdb://session/{name}`,
`loomdb://documents`, `loomdb://document/{name}`. Every tool answers JSON text; an
error comes back through the one error mapper (`answers`), and the server keeps
serving. `context` answers what a model is sent there (`Loom.request`, as the CLI and
the HTTP API do), a node the one shape of `loomdb.shapes`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..content import plain_text
from ..errors import MissingExtra
from ..shapes import node_json
from . import tools_memory
from .answers import resource, tool

if TYPE_CHECKING:
    from ..agents.config import ToolsConfig
    from ..api import Loom
    from ..providers.config import ProvidersConfig

#: how many characters of a node's text a listing shows
PREVIEW = 200


def nodes_json(loom: Loom, headish: str) -> list[dict[str, Any]]:
    """The path to `headish`, each node in the one shape (with its overlay)."""
    return [node_json(n, loom.meta(n.id)) for n in loom.nodes(loom.path(headish))]


def tree_json(loom: Loom, name: str) -> dict[str, Any]:
    """A tree, its nodes (text previews) and the sessions on it."""
    tree = loom.tree(name)
    nodes = [{"id": n.id, "parent": n.parent, "role": n.role, "author": n.author,
              "text": plain_text(n.content)[:PREVIEW]} for n in loom.tree_nodes(tree.id)]
    sessions = [{"name": r.name, "node": r.node} for r in loom.refs("session", tree.id)]
    return {**tree.to_json(), "node_list": nodes, "sessions": sessions,
            "leaves": loom.leaves(tree.id)}


def session_json(loom: Loom, name: str) -> dict[str, Any]:
    """A session: where it points and the conversation up to there."""
    ref = loom.ref(name)
    return {**ref.to_json(), "nodes": nodes_json(loom, name)}


def build(loom: Loom, config: ProvidersConfig | None = None,
          environ: Mapping[str, str] | None = None, tools: ToolsConfig | None = None) -> Any:
    """The server object, its tools and resources bound to one open store; `tools` are
    the programs (tools.toml) an agent's turn may run."""
    try:
        from mcp.server.mcpserver import MCPServer
    except ImportError:
        raise MissingExtra("the MCP server", "mcp") from None
    from ..agents.loop import run_turn
    from ..agents.spawning import spawn as run_spawn

    server = MCPServer("loomdb", log_level="WARNING", instructions=(
        "Branching conversation memory: read a thread's context, append to it, fork it, "
        "generate, spawn; keep documents (versioned), collections, links, bookmarks and "
        "tags; search by words or meaning."))

    def context_tool(headish: str, format: str = "normalized", model: str | None = None) -> Any:
        """What a model is sent at a node or session (a persona's system prompt and a
        subagent's inherited path included): normalized, or as an `openai`,
        `anthropic` or `completion` request body."""
        return loom.request(headish, format=format, model=model, config=config,
                            environ=environ)

    def append_tool(headish: str, text: str, role: str = "user", author: str | None = None,
                    options: dict[str, Any] | None = None) -> Any:
        """Add a message after a node or session (a session moves to it); `options` is
        the thread's options delta (tools and servers by their configured names)."""
        node = loom.append(headish, text, role=role, author=author, options=options,
                           source="human" if author is None else "agent")
        return {"node": node.id, "tree": node.tree}

    def fork_tool(headish: str, name: str) -> Any:
        """Start a new session at a node (nothing is copied)."""
        ref = loom.fork(headish, name)
        return {"name": ref.name, "node": ref.node, "tree": ref.tree}

    def log_tool(headish: str) -> Any:
        """The conversation from the root to a node or session."""
        return {"nodes": nodes_json(loom, headish)}

    def tree_tool(tree: str) -> Any:
        """A tree: its nodes, sessions and leaves."""
        return tree_json(loom, tree)

    def generate_tool(headish: str, max_steps: int = 4, max_tokens: int | None = None,
                      model: str | None = None) -> Any:
        """Let the model answer at a node or session (tools and approvals apply)."""
        turn = run_turn(loom, headish, models=[model] if model else [], max_steps=max_steps,
                        max_tokens=max_tokens, config=config, environ=environ, tools=tools)
        return {**turn.to_json(), "text": plain_text(turn.answer.content) if turn.answer else None}

    def spawn_tool(headish: str, task: str, persona: str | None = None, max_steps: int = 4,
                   max_tokens: int | None = None) -> Any:
        """Run a task in a subagent that sees this thread; its summary comes back here."""
        return run_spawn(loom, headish, task, persona=persona, max_steps=max_steps,
                         max_tokens=max_tokens, config=config, environ=environ,
                         tools=tools).to_json()

    def delete_tool(address: str, force: bool = False, reason: str | None = None) -> Any:
        """Delete a node and everything created from it, or tree:ID, for real (refs at or
        below it refuse it unless force, which deletes them too)."""
        from ..forget import service as F

        return F.delete(loom, address, force=force, reason=reason).to_json()

    def redact_tool(headish: str, reason: str | None = None) -> Any:
        """Erase a node's content everywhere it is stored; it stays as a [redacted] tombstone."""
        from ..forget import service as F

        return F.redact(loom, headish, reason=reason).to_json()

    def forgotten_tool(tree: str | None = None, limit: int = 100) -> Any:
        """The record of forgetting: who, when, what, which ids, why (never content)."""
        from ..forget import service as F

        return {"lines": F.log(loom, limit=limit, tree=tree)}

    for name, fn in (("context", context_tool), ("append", append_tool), ("fork", fork_tool),
                     ("log", log_tool), ("tree", tree_tool), ("generate", generate_tool),
                     ("spawn", spawn_tool), ("delete", delete_tool), ("redact", redact_tool),
                     ("forgotten", forgotten_tool)):
        server.add_tool(tool(fn), name=name, description=fn.__doc__, structured_output=False)
    tools_memory.register(server, loom)

    @server.resource("loomdb://trees", mime_type="application/json")
    @resource
    def trees_resource() -> Any:
        return [t.to_json() for t in loom.trees()]

    @server.resource("loomdb://tree/{tree}", mime_type="application/json")
    @resource
    def tree_resource(tree: str) -> Any:
        return tree_json(loom, tree)

    @server.resource("loomdb://sessions", mime_type="application/json")
    @resource
    def sessions_resource() -> Any:
        return [r.to_json() for r in loom.refs("session")]

    @server.resource("loomdb://session/{name}", mime_type="application/json")
    @resource
    def session_resource(name: str) -> Any:
        return session_json(loom, name)

    return server


def serve(loom: Loom, config: ProvidersConfig | None = None,
          environ: Mapping[str, str] | None = None, tools: ToolsConfig | None = None) -> None:
    """Serve the store over stdio until the client closes the connection."""
    build(loom, config, environ, tools).run("stdio")
