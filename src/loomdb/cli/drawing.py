"""Drawing a tree's branches for the terminal (Rich), from the library's TreeView."""

from __future__ import annotations

from typing import Any

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
        words = summary(n.content).replace("\n", " ")
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
        if m and m.tags:
            label.append("  " + " ".join(f"#{t}" for t in m.tags), style="magenta")
        return label

    for fork in view.forks:
        top.add(Text(f"{fork['kind']} {fork['name']}: {breadcrumb(fork['from'])}", style="dim green"))
    # A run of single continuations stays at one indent; only a branch point indents,
    # each of its branches under its first message (a tree 10,000 messages deep draws
    # as a column, not a staircase off the screen).
    stack: list[tuple[RichTree, Node, bool]] = [(top, r, False) for r in reversed(view.roots)]
    while stack:
        container, n, heads_branch = stack.pop()
        branch = container.add(line(n))
        kids = view.children(n)
        if len(kids) == 1:
            stack.append((branch if heads_branch else container, kids[0], False))
        else:
            stack.extend((branch, c, True) for c in reversed(kids))
    return top


def summary(blocks: list[dict[str, Any]]) -> str:
    """One line for a node's content: its text, with every other block as a short label
    (`[image]`, `[tool_use weather]`, `[tool_result weather]`...) where it stands."""
    parts: list[str] = []
    for block in blocks:
        kind = block["type"]
        if kind == "text":
            parts.append(block["text"])
        elif kind in ("tool_use", "tool_result"):
            parts.append(f"[{kind} {block.get('name') or block.get('tool_use_id') or ''}]".replace(" ]", "]"))
            if kind == "tool_result":
                parts.append(C.plain_text(block["content"]))
        elif kind == "document":
            parts.append(f"[document {block.get('title') or block.get('mime_type', '')}]".replace(" ]", "]"))
        else:  # image, audio, thinking
            parts.append(f"[{kind}]")
    return " ".join(p for p in parts if p)


def breadcrumb(forked_from: dict[str, Any]) -> str:
    """`forked from main at 7T1YNZ3X`: where a session or view was forked."""
    at = f"at {forked_from['node'][-8:]}"
    return f"forked from {forked_from['ref']} {at}" if forked_from.get("ref") else f"forked {at}"
