"""The MCP server (official `mcp` SDK, stdio transport: `stdio.py`).

Tools: `context`, `append`, `fork`, `log`, `tree`, `generate`, `spawn`, `delete`,
`redact`, `forgotten`, and the memory an agent keeps (`tools_memory`: `show`, `edit`,
`bookmark`, `tag`, `search`, documents, collections, links and backlinks, pending
approvals), and the git verbs (`tools_branches`: `diff`, `merge`, `replay`,
`fork_fresh`). Resources: `loomdb://trees`, `loomdb://tree/{tree}`, `loomdb://sessions`,
`loomdb://session/{name}`, `loomdb://documents`, `loomdb://document/{name}`.

The server acts for the local operator, as the CLI does: each tool is one call to the
operator's `Door` (`loomdb.front`) plus serialization, in the shape the CLI's `--json`
and the HTTP API give, with its annotations (`catalog.Hints`). The door is `me()`: the
store opens at the first call that needs it, not when the server starts. An answer is
a JSON object, sent as `structuredContent` and as its text; an error comes back
through the one error mapper (`answers`), and the server keeps serving. `context`
answers what a model is sent there, as the CLI and the HTTP API do; a node is the one
shape of `loomdb.shapes`.

Nothing here imports the SDK or the store at module level: `stdio.py` lists these
tools before either is loaded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from . import catalog, tools_branches, tools_memory, tools_pieces
from .answers import resource, tool
from .catalog import ADDS, ADDS_ONCE, READS, RUNS_A_TURN, Hints, Tool

if TYPE_CHECKING:
    from ..front import Door

#: how many characters of a node's text a listing shows
PREVIEW = 200


def core_tools(me: Callable[[], Door]) -> dict[str, Tool]:
    """The conversation tools by name, acting through the operator's door."""

    def context_tool(headish: str, format: str = "normalized",
                     model: str | None = None) -> dict[str, Any]:
        """What a model is sent at a node or session (a persona's system prompt and a
        subagent's inherited path included): normalized, or as an `openai`,
        `anthropic` or `completion` request body."""
        return me().nodes.context(headish, format=format, model=model)

    def append_tool(headish: str, text: str, role: str = "user", author: str | None = None,
                    options: dict[str, Any] | None = None) -> dict[str, Any]:
        """Add a message after a node or session (a session moves to it); `options` is
        the thread's options delta (tools and servers by their configured names)."""
        node = me().nodes.append(headish, text, role=role, author=author, options=options,
                                 source="human" if author is None else "agent")
        return {"node": node.id, "tree": node.tree}

    def fork_tool(headish: str, name: str) -> dict[str, Any]:
        """Start a new session at a node (nothing is copied)."""
        ref = me().refs.create(headish, name)
        return {"name": ref.name, "node": ref.node, "tree": ref.tree}

    def log_tool(headish: str) -> dict[str, Any]:
        """The conversation from the root to a node or session."""
        return {"nodes": me().nodes.path_json(headish)}

    def tree_tool(tree: str) -> dict[str, Any]:
        """A tree: its nodes, sessions and leaves."""
        return me().trees.outline(tree, preview=PREVIEW)

    def generate_tool(headish: str, max_steps: int = 4, max_tokens: int | None = None,
                      model: str | None = None) -> dict[str, Any]:
        """Let the model answer at a node or session (tools and approvals apply)."""
        from ..content import plain_text

        turn = me().agents.turn(headish, models=[model] if model else [],
                                max_steps=max_steps, max_tokens=max_tokens)
        return {**turn.to_json(), "text": plain_text(turn.answer.content) if turn.answer else None}

    def spawn_tool(headish: str, task: str, persona: str | None = None, max_steps: int = 4,
                   max_tokens: int | None = None) -> dict[str, Any]:
        """Run a task in a subagent that sees this thread; its summary comes back here."""
        return me().agents.spawn(headish, task, persona=persona, max_steps=max_steps,
                                 max_tokens=max_tokens).to_json()

    def delete_tool(address: str, force: bool = False, reason: str | None = None,
                    now: bool = False) -> dict[str, Any]:
        """Delete a node and everything created from it, for real (refs at or below it
        refuse it unless force, which deletes them too); tree:ID goes to the trash with
        its sessions and views (restorable), or for real with now."""
        if address.startswith("tree:") and not now:
            return me().forget.trash_tree(address[len("tree:"):], reason=reason)
        if address.startswith("tree:"):
            return me().forget.purge_tree(address[len("tree:"):], reason=reason,
                                          force=force).to_json()
        return me().forget.delete(address, force=force, reason=reason).to_json()

    def redact_tool(headish: str, reason: str | None = None) -> dict[str, Any]:
        """Erase a node's content everywhere it is stored; it stays as a [redacted] tombstone."""
        return me().forget.redact(headish, reason=reason).to_json()

    def redact_spans_tool(text: str | None = None, pattern: str | None = None,
                          secret_type: str | None = None, tree: str | None = None,
                          dry_run: bool = True, reason: str | None = None) -> dict[str, Any]:
        """Erase a text, a regex's matches or a kind of secret wherever it was copied
        (contents, tool calls, raw responses, titles...), each span replaced by a marker;
        nodes keep their ids. A dry run (counts per tree) unless dry_run is false."""
        return me().forget.redact_spans(text=text, pattern=pattern, secret_type=secret_type,
                                        tree=tree, dry_run=dry_run, reason=reason).to_json()

    def forgotten_tool(tree: str | None = None, limit: int = 100) -> dict[str, Any]:
        """The record of forgetting: who, when, what, which ids, why (never content)."""
        return {"lines": me().forget.log(tree=tree, limit=limit)}

    return {
        "context": Tool(context_tool, READS), "append": Tool(append_tool, ADDS),
        "fork": Tool(fork_tool, ADDS_ONCE), "log": Tool(log_tool, READS),
        "tree": Tool(tree_tool, READS), "generate": Tool(generate_tool, RUNS_A_TURN),
        "spawn": Tool(spawn_tool, RUNS_A_TURN),
        # gone for good; a second delete finds nothing to delete
        "delete": Tool(delete_tool, Hints(read_only=False, destructive=True,
                                          idempotent=True, open_world=False)),
        # the content is erased; each redaction is recorded again in the forget log
        "redact": Tool(redact_tool, Hints(read_only=False, destructive=True,
                                          idempotent=False, open_world=False)),
        # a span already replaced is not found again
        "redact_spans": Tool(redact_spans_tool, Hints(read_only=False, destructive=True,
                                                      idempotent=True, open_world=False)),
        "forgotten": Tool(forgotten_tool, READS),
    }


def offered(me: Callable[[], Door]) -> dict[str, Tool]:
    """Every tool the server offers, by name, acting through the operator's door."""
    return {**core_tools(me), **tools_memory.memory_tools(me), **tools_branches.branch_tools(me),
            **tools_pieces.piece_tools(me)}


def build(me: Callable[[], Door], tools: Mapping[str, Tool]) -> Any:
    """The SDK's server object: `tools` (see `offered`) and the resources, acting
    through the operator's door `me`. Imports the SDK."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    server = MCPServer(catalog.NAME, version=catalog.VERSION, log_level="WARNING",
                       instructions=catalog.INSTRUCTIONS)
    for name, (fn, hints) in tools.items():
        server.add_tool(tool(fn), name=name, description=catalog.description(fn),
                        annotations=ToolAnnotations.model_validate(hints.to_json()),
                        structured_output=True)
    readers = _readers(me)
    for found in catalog.RESOURCES:
        server.resource(found.uri, name=found.name, description=found.description,
                        mime_type=catalog.JSON_TYPE)(resource(readers[found.name]))
    return server


def _readers(me: Callable[[], Door]) -> dict[str, Callable[..., Any]]:
    """What each resource of `catalog.RESOURCES` reads, by name."""

    def trees() -> Any:
        return [t.to_json() for t in me().trees.list()]

    def tree(tree: str) -> Any:
        return me().trees.outline(tree, preview=PREVIEW)

    def sessions() -> Any:
        return [r.to_json() for r in me().refs.list("session")]

    def session(name: str) -> Any:
        return me().refs.session(name)

    def documents() -> Any:
        return me().documents.list()

    def document(name: str) -> Any:
        return me().documents.show(name).to_json()

    return {"trees": trees, "tree": tree, "sessions": sessions, "session": session,
            "documents": documents, "document": document}


__all__ = ["PREVIEW", "build", "core_tools", "offered"]
