"""What an imported store holds, measured the same way for every agent-session format:
the counts the tests compare with what the session files hold."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from loomdb import Loom


@dataclass(frozen=True)
class Counts:
    sessions: int
    nodes: int
    branches: int
    child_trees: int
    compactions: int
    tool_calls: int
    tool_results: int


def _blocks(node: Any, kind: str) -> int:
    return sum(1 for b in node.content if isinstance(b, dict) and b.get("type") == kind)


def store_counts(loom: Loom) -> Counts:
    trees = loom.trees()
    nodes = [n for t in trees for n in loom.tree_nodes(t.id)]
    children = sum(1 for t in trees if isinstance(t.lineage, dict) and "spawned" in t.lineage)
    return Counts(
        sessions=len(trees) - children,
        nodes=len(nodes),
        branches=sum(len(loom.branch_points(t.id)) for t in trees),
        child_trees=children,
        compactions=sum(1 for n in nodes if n.kind == "compaction"),
        tool_calls=sum(_blocks(n, "tool_use") for n in nodes),
        tool_results=sum(_blocks(n, "tool_result") for n in nodes),
    )
