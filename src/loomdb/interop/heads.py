"""The source's own sessions as session refs: one per `Head` of a conversation.

Most sources have one active branch and get one session (`writer._session`). Some keep
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
        elif ref.node != target and w.follows_source(ref):
            storage(w.loom).move_ref(ref, target, "import: the source's session moved")
