"""The git verbs of conversations over MCP: `diff`, `merge`, `replay`, `fork_fresh`,
and `share_continue` (a fork of a branch someone shared with "continue" allowed).

Each tool is one call to the operator's `Door.branches` (`loomdb.front.branches`; a
shared branch: `Door.shares`) in the shape of the CLI's `--json` and the HTTP API. `merge`, `replay` and `fork_fresh`
take a name or a tip once: the same call again writes nothing (a merge answers the one
made, a session name is taken); each may ask a model (a summary, the replayed turns'
answers), possibly a remote provider, so they reach the open world.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .catalog import ADDS_ONCE, READS, Hints, Tool

if TYPE_CHECKING:
    from ..front import Door

#: adds once (the same call again writes nothing) and may ask a model
ADDS_ONCE_ASKING = Hints(read_only=False, destructive=False, idempotent=True, open_world=True)


def branch_tools(me: Callable[[], Door]) -> dict[str, Tool]:
    """The tools by name, acting through the operator's door (opened by `me()`)."""

    def diff_tool(left: str, right: str) -> dict[str, Any]:
        """Compare two paths from their common ancestor, message by message: `same`,
        `changed` (a line diff of the text, tool calls by name and input), `added`
        (only on the right) or `removed` (only on the left)."""
        return me().branches.diff(left, right)

    def merge_tool(branch: str, into: str, text: str | None = None,
                   summary: str | None = None) -> dict[str, Any]:
        """Bring a branch's outcome back to another line of its tree: a node appended
        to `into` whose sources are its head and the branch's tip (the context there
        holds the branch's last message), carrying `text` or the model `summary`'s
        summary of the branch if given. Nothing is copied; merging again writes nothing."""
        node, created = me().branches.merge(branch, into, text=text, summary=summary)
        return {"node": node.id, "tree": node.tree,
                "merged_from": (node.origin or {}).get("merged_from", {}), "created": created}

    def replay_tool(path: str, session: str, onto: str | None = None,
                    models: list[str] | None = None, n: int = 1,
                    max_tokens: int | None = None, generate: bool = True) -> dict[str, Any]:
        """Send the user turns of `path` again, in order, onto `onto` (default: its
        first message) as the new session `session`, each answered by the model before
        the next (or not, with generate false); then `diff` compares the two."""
        return me().branches.replay(path, session, onto=onto, models=models or [], n=n,
                                    max_tokens=max_tokens, generate=generate).to_json()

    def fork_fresh_tool(headish: str, name: str, summary: str | None = None) -> dict[str, Any]:
        """Start a new tree from a message, nothing before it in the context (or the
        model `summary`'s summary of the path up to it), with a session `name` at its
        root and lineage to where it continues from."""
        tree, root = me().branches.fork_fresh(headish, name, summary=summary)
        return {"name": name, "node": root.id, "tree": tree.id,
                "continued": (tree.lineage or {}).get("continued")}

    def share_continue_tool(token: str, session: str, text: str) -> dict[str, Any]:
        """Continue a branch shared by a link that allows it: a new tree whose root is
        `text` and whose context starts with the shared path (nothing copied), with a
        session `session` on it; a read-only link is refused."""
        tree, root = me().shares.fork(token, session, text)
        return {"tree": tree.id, "node": root.id, "session": session}

    return {"diff": Tool(diff_tool, READS), "merge": Tool(merge_tool, ADDS_ONCE_ASKING),
            "replay": Tool(replay_tool, ADDS_ONCE_ASKING),
            "fork_fresh": Tool(fork_fresh_tool, ADDS_ONCE_ASKING),
            "share_continue": Tool(share_continue_tool, ADDS_ONCE)}
