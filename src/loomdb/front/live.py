"""What a live view follows (`loom.as_(caller).live`): a stamp of one tree that
changes whenever the tree does, cheap enough to read a few times a second.

A stamp is the tree's message count and latest change with where each of its refs
points: a new message (an append, an edit, a generation, a tool call waiting for
approval or its result once decided) changes the first two, a moved, new or deleted
session, view or bookmark the refs. An edge compares successive stamps and tells its
followers when one differs (`loomdb.server.live`), whichever process wrote. The
caller's approvals (tool calls waiting for a person, in any of their trees) have a
stamp of their own, for the inbox.
"""

from __future__ import annotations

from typing import Any

from .base import AreaDoor


class Live(AreaDoor):
    """Stamps of the caller's trees."""

    def tree(self, name: str) -> str:
        """The id of the tree `name` names, among the caller's (to follow it)."""
        return self.sight.tree(name).id

    def stamp(self, tree_id: str) -> dict[str, Any]:
        """The tree's stamp (NotFound once it is gone or no longer the caller's)."""
        tree = self.sight.tree(tree_id)
        refs = self.sight.who.refs(tree=tree.id)
        return {"tree": tree.id, "nodes": tree.nodes, "updated_at": tree.updated_at,
                "refs": {r.name: r.node for r in sorted(refs, key=lambda r: r.name)}}

    def approvals(self) -> dict[str, Any]:
        """The stamp of the caller's tool calls waiting for a person (or being run):
        which, and in what state; it changes when one is asked for or decided."""
        from .agents import Agents

        found = Agents(self.sight, self.runtime).pending(include_running=True)
        return {"pending": [[p.node, p.state] for p in found]}


__all__ = ["Live"]
