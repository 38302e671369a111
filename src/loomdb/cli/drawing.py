"""Drawing a tree's branches for the terminal (Rich), from the library's TreeView."""

from __future__ import annotations

from rich.text import Text
from rich.tree import Tree as RichTree

from .. import content as C
from ..model import Node
from ..treeview import TreeView


def draw(view: TreeView) -> RichTree:
    """The tree as Rich renders it: one line per node, versions, refs and flags marked."""
    tree = view.tree
    top = RichTree(Text(f"{tree.title}  [{tree.mode}] {tree.id}", style="bold"))

    def line(n: Node) -> Text:
        words = C.plain_text(n.content).replace("\n", " ")
        label = Text(f"{n.id[-8:]} ", style="dim")
        label.append(f"{n.role}: ", style="bold cyan" if n.role == "assistant" else "bold")
        label.append(words[:70] + ("…" if len(words) > 70 else ""))
        extra = view.edited(n)
        if extra:
            label.append(f"  ({len(extra)} edited version{'s' * (len(extra) > 1)})", style="yellow")
        tags = view.refs_at(n)
        if tags:
            label.append("  <" + ", ".join(tags) + ">", style="green")
        m = view.meta.get(n.id)
        if m and m.pruned:
            label.append("  [pruned]", style="red")
        if m and m.excluded:
            label.append("  [excluded]", style="red")
        return label

    stack = [(top, r) for r in reversed(view.roots)]
    while stack:
        parent, n = stack.pop()
        branch = parent.add(line(n))
        stack.extend((branch, c) for c in reversed(view.children(n)))
    return top
