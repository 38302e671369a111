"""A tree's shape for drawing: who continues whom, edited versions, refs and flags.

The terminal drawing (the CLI) and the JSON (`loomdb tree --json`) are both made from one `TreeView`, read in a few queries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import content as C
from .model import Meta, Node, Tree
from .storage_ops import storage

if TYPE_CHECKING:
    from .loom import Loom


@dataclass
class TreeView:
    """A tree's nodes arranged for drawing (originals by parent slot, versions by slot)."""

    tree: Tree
    roots: list[Node]
    kids: dict[str, list[Node]]
    versions: dict[str, list[Node]]
    labels: dict[str, list[str]]
    meta: dict[str, Meta]
    #: sessions and views of the tree that were forked: `{"name", "kind", "from"}`
    forks: list[dict[str, Any]] = field(default_factory=list)

    def children(self, node: Node) -> list[Node]:
        """The continuations of a node (of any of its versions), oldest first."""
        return self.kids.get(node.slot, [])

    def edited(self, node: Node) -> list[Node]:
        """The edited versions of a node's slot (not the original)."""
        return self.versions.get(node.slot, [])

    def refs_at(self, node: Node) -> list[str]:
        """`kind:name` of every ref at the node or at one of its versions."""
        return [t for v in [node, *self.edited(node)] for t in self.labels.get(v.id, [])]

    def to_json(self) -> dict[str, Any]:
        """`{"tree", "roots": [id], "nodes": [{"id", "parent", "role", "text", "versions",
        "refs", "children": [id]}], "forks"}`: the nodes flat, in drawing order (each node
        before its continuations), linked by id. Flat, so a tree 100,000 messages deep is
        as easy to write and to read as a short one (nested objects would need a reader
        that recurses once per message)."""
        nodes: list[dict[str, Any]] = []
        stack: list[tuple[Node, str | None]] = [(r, None) for r in reversed(self.roots)]
        while stack:
            n, parent = stack.pop()
            kids = self.children(n)
            nodes.append({
                "id": n.id, "parent": parent, "role": n.role,
                "text": C.plain_text(n.content)[:200],
                "versions": [v.id for v in self.edited(n)],
                "refs": self.labels.get(n.id, []),
                "children": [c.id for c in kids],
            })
            stack.extend((c, n.id) for c in reversed(kids))
        return {"tree": self.tree.to_json(), "roots": [r.id for r in self.roots],
                "nodes": nodes, "forks": self.forks}


def tree_view(loom: Loom, name: str) -> TreeView:
    """The view of the tree `name` (an id, prefix, or any headish inside it)."""
    tree = loom.tree(name)
    nodes = loom.tree_nodes(tree.id)
    by_id = {n.id: n for n in nodes}
    kids: dict[str, list[Node]] = {}
    versions: dict[str, list[Node]] = {}
    for n in nodes:
        if n.edited_from:
            versions.setdefault(n.slot, []).append(n)
        elif n.parent is not None:
            kids.setdefault(by_id[n.parent].slot, []).append(n)
    labels: dict[str, list[str]] = {}
    refs = loom.refs(tree=tree.id)
    for ref in refs:
        labels.setdefault(ref.node, []).append(f"{ref.kind}:{ref.name}")
    roots = [by_id[tree.root]] if tree.root and tree.root in by_id else []
    shown = [n.id for vs in kids.values() for n in vs] + [r.id for r in roots]
    forks = [{"name": r.name, "kind": r.kind, "from": r.forked_from} for r in refs if r.forked_from]
    return TreeView(tree, roots, kids, versions, labels, storage(loom).metas(shown), forks)
