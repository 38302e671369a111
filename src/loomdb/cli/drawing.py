"""Drawing a tree's branches for the terminal (Rich) and as nested JSON."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from rich.tree import Tree as RichTree

from .. import content as C
from ..model import Node


def _index(loom: Any, name: str) -> tuple[Any, dict[str, list[Node]], dict[str, list[Node]], dict[str, list[str]]]:
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
    for ref in loom.refs(tree=tree.id):
        labels.setdefault(ref.node, []).append(f"{ref.kind}:{ref.name}")
    return tree, kids, versions, labels


def _roots(loom: Any, tree: Any) -> list[Node]:
    return [n for n in loom.nodes([tree.root]) if n] if tree.root else []


def draw(loom: Any, name: str) -> RichTree:
    tree, kids, versions, labels = _index(loom, name)
    meta = loom.backend.get_meta([n.id for vs in kids.values() for n in vs] + [tree.root])
    top = RichTree(Text(f"{tree.title}  [{tree.mode}] {tree.id}", style="bold"))

    def line(n: Node) -> Text:
        words = C.plain_text(n.content).replace("\n", " ")
        label = Text(f"{n.id[-8:]} ", style="dim")
        label.append(f"{n.role}: ", style="bold cyan" if n.role == "assistant" else "bold")
        label.append(words[:70] + ("…" if len(words) > 70 else ""))
        extra = versions.get(n.slot, [])
        if extra:
            label.append(f"  ({len(extra)} edited version{'s' * (len(extra) > 1)})", style="yellow")
        tags = [t for v in [n, *extra] for t in labels.get(v.id, [])]
        if tags:
            label.append("  <" + ", ".join(tags) + ">", style="green")
        m = meta.get(n.id)
        if m and m.pruned:
            label.append("  [pruned]", style="red")
        if m and m.excluded:
            label.append("  [excluded]", style="red")
        return label

    stack = [(top, r) for r in reversed(_roots(loom, tree))]
    while stack:
        parent, n = stack.pop()
        branch = parent.add(line(n))
        stack.extend((branch, c) for c in reversed(kids.get(n.slot, [])))
    return top


def tree_json(loom: Any, name: str) -> dict[str, Any]:
    tree, kids, versions, labels = _index(loom, name)

    def node(n: Node) -> dict[str, Any]:
        return {
            "id": n.id, "role": n.role, "text": C.plain_text(n.content)[:200],
            "versions": [v.id for v in versions.get(n.slot, [])],
            "refs": labels.get(n.id, []),
            "children": [node(c) for c in kids.get(n.slot, [])],
        }

    return {"tree": tree.to_json(), "roots": [node(r) for r in _roots(loom, tree)]}
