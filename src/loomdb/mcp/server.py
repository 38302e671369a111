"""The MCP server (official `mcp` SDK, stdio transport).

Tools: `search`, `context`, `append`, `fork`, `log`, `tree`, `generate`, `spawn`.
Resources: `loomdb://trees`, `loomdb://tree/{tree}`, `loomdb://sessions`,
`loomdb://session/{name}`. Every tool answers JSON text; a loomdb error comes back as
a tool error naming what and where, and the server keeps serving.

`search` is a plain full-text scan (every word of the query, case-insensitive) over
node text, newest trees first: enough for a small store, and the place a search
index plugs in when the store has one.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..content import plain_text
from ..errors import InvalidInput, LoomError, MissingExtra

if TYPE_CHECKING:
    from ..agents.config import ToolsConfig
    from ..loom import Loom
    from ..providers.config import ProvidersConfig

#: how many characters of a node's text a listing shows
PREVIEW = 200


def _node(n: Any) -> dict[str, Any]:
    return {"id": n.id, "parent": n.parent, "role": n.role, "author": n.author,
            "kind": n.kind, "text": plain_text(n.content), "content": n.content,
            "created_at": n.created_at, "origin": n.origin}


def search(loom: Loom, query: str, limit: int = 10) -> list[dict[str, Any]]:
    """Nodes whose text holds every word of `query`, newest trees first."""
    words = [w.lower() for w in query.split()]
    if not words:
        raise InvalidInput("search", "give some words")
    hits: list[dict[str, Any]] = []
    for tree in loom.trees():
        for node in reversed(loom.tree_nodes(tree.id)):
            text = plain_text(node.content)
            low = text.lower()
            if all(w in low for w in words):
                hits.append({"node": node.id, "tree": tree.id, "role": node.role,
                             "text": text[:PREVIEW]})
                if len(hits) >= limit:
                    return hits
    return hits


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
    return {**ref.to_json(), "nodes": [_node(n) for n in loom.nodes(loom.path(name))]}


def build(loom: Loom, config: ProvidersConfig | None = None,
          environ: Mapping[str, str] | None = None, tools: ToolsConfig | None = None) -> Any:
    """The server object, its tools and resources bound to one open store; `tools` are
    the programs (tools.toml) an agent's turn may run."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
    except ImportError:
        raise MissingExtra("the MCP server", "mcp") from None
    from ..agents.loop import run_turn
    from ..agents.subagents import spawn as run_spawn
    from ..agents.threads import thread_context

    server = MCPServer("loomdb", log_level="WARNING", instructions="Branching conversation memory: "
                            "read a thread's context, append to it, fork it, generate, spawn.")

    def answer(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False)

    def guarded(fn: Any) -> Any:
        """Tools answer JSON; a loomdb error becomes a tool error with its message."""
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> str:
            try:
                return answer(fn(*args, **kwargs))
            except LoomError as exc:
                raise ToolError(f"loomdb: {exc}") from None

        return call

    def search_tool(query: str, limit: int = 10) -> Any:
        """Find messages containing every word of the query."""
        return {"hits": search(loom, query, limit)}

    def context_tool(headish: str) -> Any:
        """The normalized context (messages + options) a model sees at a node or session."""
        return thread_context(loom, headish)

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
        return {"nodes": [_node(n) for n in loom.nodes(loom.path(headish))]}

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

    for name, fn in (("search", search_tool), ("context", context_tool),
                     ("append", append_tool), ("fork", fork_tool), ("log", log_tool),
                     ("tree", tree_tool), ("generate", generate_tool), ("spawn", spawn_tool),
                     ("delete", delete_tool), ("redact", redact_tool),
                     ("forgotten", forgotten_tool)):
        server.add_tool(guarded(fn), name=name, description=fn.__doc__,
                        structured_output=False)

    @server.resource("loomdb://trees", mime_type="application/json")
    def trees_resource() -> str:
        return answer([t.to_json() for t in loom.trees()])

    @server.resource("loomdb://tree/{tree}", mime_type="application/json")
    def tree_resource(tree: str) -> str:
        return answer(tree_json(loom, tree))

    @server.resource("loomdb://sessions", mime_type="application/json")
    def sessions_resource() -> str:
        return answer([r.to_json() for r in loom.refs("session")])

    @server.resource("loomdb://session/{name}", mime_type="application/json")
    def session_resource(name: str) -> str:
        return answer(session_json(loom, name))

    return server


def serve(loom: Loom, config: ProvidersConfig | None = None,
          environ: Mapping[str, str] | None = None, tools: ToolsConfig | None = None) -> None:
    """Serve the store over stdio until the client closes the connection."""
    build(loom, config, environ, tools).run("stdio")
