"""The source's own sessions as session refs: one per `Head` of a conversation.

Most sources have one active branch and get one session (`write_session`). Some keep
several named, moving pointers into one tree (simonw/llm's threads, a fork among
them): each becomes a session `import/<format>/<name>`, found again on the next import
by the pointer's id in the ref's origin (`imported.head`), and moved to the pointer's
new message only while it is still where an import left it (a session you moved,
continued or selected in stays where you put it).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..model import Node, Ref
from ..storage_ops import storage

if TYPE_CHECKING:
    from .writer import _ConversationWriter

_REF_CHAR = re.compile(r"[^A-Za-z0-9_./-]+")


def ref_part(value: str) -> str:
    """A piece of a ref name from untrusted text: characters refs cannot hold become `-`."""
    part = _REF_CHAR.sub("-", value.strip()).strip("-./")
    while ".." in part:
        part = part.replace("..", ".")
    return part or "bookmark"


def write_heads(w: _ConversationWriter, nodes: dict[str, Node]) -> None:
    """Create or move the session of every head whose message is in `nodes`."""
    mine: dict[str, Ref] = {}
    for r in w.loom.refs("session", w.tree_id):
        imported = r.origin.get("imported") if isinstance(r.origin, dict) else None
        if isinstance(imported, dict) and isinstance(imported.get("head"), str):
            mine[imported["head"]] = r
    for head in w.conv.heads:
        if head.message not in nodes:
            continue
        target = nodes[head.message].id
        ref = mine.get(head.source_id)
        if ref is None:
            origin = {"imported": {"format": w.fmt, "conversation": w.conv.source_id,
                                   "head": head.source_id, **head.extra}}
            name = w.free_name(f"import/{w.fmt.replace('_', '-')}/{ref_part(head.name)}", target)
            if name is not None:
                w.loom.create_ref(name, "session", w.tree_id, target, {}, origin)
        elif ref.node != target and follows_source(w, ref):
            storage(w.loom).move_ref(ref, target, "import: the source's session moved")


def write_session(w: _ConversationWriter, nodes: dict[str, Node]) -> None:
    """The active branch as a session: created with the tree, moved to the source's
    new current message when the import added messages (see `_follows_source`)."""
    from .tree import newest_leaf

    if w.conv.heads:
        write_heads(w, nodes)
        return
    current = w.conv.current_source_id
    if current is None or current not in nodes:
        current = newest_leaf(w.conv.messages)
    if current is None or current not in nodes or not w.outcome.nodes:
        return
    head = nodes[current].id
    mine = [r for r in w.loom.refs("session", w.tree_id) if isinstance(r.origin, dict)
            and (r.origin.get("imported") or {}).get("conversation") == w.conv.source_id]
    origin = {"imported": {"format": w.fmt, "conversation": w.conv.source_id,
                           "current": current}}
    if not mine:
        name = w.free_name(w.base_name(), head)
        if name is not None:
            w.loom.create_ref(name, "session", w.tree_id, head, {}, origin)
        return
    ref = mine[0]
    if ref.node == head or not follows_source(w, ref):
        return
    grew = ref.node in _active_path(w, nodes, current)
    storage(w.loom).move_ref(ref, head, "import: the source's active branch "
                                + ("grew" if grew else "changed"))

def follows_source(w: _ConversationWriter, ref: Ref) -> bool:
    """Is the session still where an import put it (nobody moved, continued or
    selected in it since)? Then it follows the source to its new active message (a
    regenerated answer, an edit); a session someone used stays where they left it."""
    log = w.loom.ref_log(ref.name)
    if not log or log[-1].new != ref.node:
        return False
    last = log[-1]
    return last.old is None or last.reason.startswith("import:")

def _active_path(w: _ConversationWriter, nodes: dict[str, Node], current: str) -> set[str]:
    """Node ids from the root to the active leaf (a session there fast-forwards)."""
    parents = w.parents
    path: set[str] = set()
    source: str | None = current
    while source is not None and nodes[source].id not in path:
        path.add(nodes[source].id)
        source = parents.get(source)
    return path
