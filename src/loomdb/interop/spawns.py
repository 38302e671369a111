"""Subagent runs brought in by an import: the lineage `loomdb spawn` writes, from source ids.

A coding agent's session file names a subagent's run by the source ids of the message
that started it (a Task call) and of the one that carried its result back. The writer
turns those into store ids through `Written`, filled as each conversation of the import
is written (a parent is always written before its subagents), and gives the child tree
the `spawned` lineage `loomdb spawn` gives its children: the parent tree, node and
session, plus the node holding the result. The caller records the returned spawn (in
the agents area) so the parent node lists the child, as for a spawned run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .model import ImportedConversation
from .report import Outcome

if TYPE_CHECKING:
    from ..loom import Loom

#: (conversation source id, message source id) -> (tree id, node id), filled as written
Written = dict[tuple[str, str], tuple[str, str]]


def spawned_lineage(conv: ImportedConversation, written: Written) -> dict[str, Any]:
    """A subagent tree's `spawned` lineage: the parent tree and node (the call that
    started it), the node that carried its result back, and the source ids."""
    spawn = conv.spawn or {}
    scope = str(spawn.get("conversation"))
    parent = written.get((scope, str(spawn.get("message"))))
    out: dict[str, Any] = {"source": {k: v for k, v in spawn.items() if isinstance(v, str)}}
    if parent is not None:
        out["tree"], out["node"] = parent
        summary = written.get((scope, str(spawn.get("summary"))))
        out["summary"] = summary[1] if summary else None
    return out


def with_session(loom: Loom, lineage: dict[str, Any]) -> dict[str, Any]:
    """The lineage with the parent tree's first session named, as `spawn` names it."""
    if "tree" in lineage:
        sessions = sorted(loom.refs("session", lineage["tree"]), key=lambda r: r.created_at)
        lineage["session"] = sessions[0].name if sessions else None
    return lineage


def spawn_record(
    loom: Loom, conv: ImportedConversation, outcome: Outcome, lineage: dict[str, Any] | None
) -> dict[str, Any] | None:
    """What the caller records for a written subagent tree (None, with a warning in the
    outcome, when its parent was not part of this import)."""
    if lineage is None or "tree" not in lineage:
        outcome.warnings.append(
            f"a subagent's run whose parent ({(conv.spawn or {}).get('conversation')}) was not "
            f"imported with it; its tree names the parent by source ids only")
        return None
    child = [r.name for r in loom.refs("session", outcome.tree)]
    return {"tree": outcome.tree, "parent_tree": lineage["tree"], "parent_node": lineage["node"],
            "session": child[0] if child else "", "task": (conv.spawn or {}).get("task") or "",
            "summary_node": lineage.get("summary")}
