"""Sessions that come back: an exported path, continued in another tool, re-imported as a branch.

An export for a coding agent (`claude-code`, `codex`, `pi`) names each node it writes in
the ids of its lines: a Claude Code line's `uuid` is the node's ULID written as a UUID
(the same 128 bits), a Codex item's `id` is `<prefix>_<node id>` and a pi entry's `id`
the node id itself.
The tools keep those ids when they resume, fork or append to the session, so the
parsers can say which stored node a message came from (`ImportedMessage.same_as`).

`carried` finds, before a conversation is written, the part of it that is already in
the store: starting at its root, every message whose named node exists, has the same
role and hangs from the node its parent message was matched to. When the root is
matched, the conversation is written into that node's tree: the matched messages are
those nodes (nothing is copied) and whatever the tool added after them lands below
them as a branch of the tree the path was exported from.

The same mechanism keeps one tree for a session file rewritten in place by its own tool:
pi upgrades an old session (entries without ids, named `#<index>` here) by giving every
entry an id; the parser names the `#<index>` each of those entries had
(`ImportedMessage.earlier_source_id`), and the nodes the first import made under those
names carry on.
"""

from __future__ import annotations

import re
import uuid as uuidlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..model import Node, Tree, ulid_text
from ..storage_ops import storage
from .model import ImportedConversation, ImportedMessage

if TYPE_CHECKING:
    from ..loom import Loom

_ULID = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")


def line_uuid(node_id: str) -> str:
    """The node's ULID as a UUID string (its 128 bits, as Claude Code's line ids)."""
    from ulid import ULID

    return str(uuidlib.UUID(bytes=ULID.from_str(node_id).bytes))


def node_of_uuid(value: str | None) -> str | None:
    """The ULID a UUID-shaped line id spells (the inverse of `line_uuid`), else None."""
    if not isinstance(value, str) or len(value) != 36:
        return None
    try:
        return ulid_text(uuidlib.UUID(value).int)
    except ValueError:
        return None


def node_id(value: object) -> str | None:
    """`value` when it is a ULID (a Codex item's or a pi entry's id written by an export)."""
    return value if isinstance(value, str) and _ULID.match(value) else None


def carried(
    loom: Loom, conv: ImportedConversation, earlier: Callable[[ImportedMessage], str]
) -> tuple[Tree, dict[str, Node]] | None:
    """(the tree, source id -> stored node) of the messages of `conv` that are stored
    nodes, when its root is one; None otherwise. `earlier(message)` is the node id an
    earlier import gave the message under its `earlier_source_id`."""
    wanted: dict[str, str] = {}
    for m in conv.messages:
        if m.same_as:
            wanted[m.source_id] = m.same_as
        elif m.earlier_source_id:
            wanted[m.source_id] = earlier(m)
    root = conv.messages[0] if conv.messages else None
    if root is None or root.source_id not in wanted:
        return None
    if not storage(loom).nodes_by_id([wanted[root.source_id]]):
        return None  # the common case, a session that never left this store: one look-up
    found = storage(loom).nodes_by_id(sorted(set(wanted.values())))
    matched: dict[str, Node] = {}
    for m in conv.messages:  # parents come first
        node = found.get(wanted.get(m.source_id, ""))
        if node is None or node.role != m.role:
            continue
        if m.parent_source_id is not None and m.parent_source_id not in matched:
            continue
        above = matched.get(m.parent_source_id) if m.parent_source_id is not None else None
        if above is not None and above.id == node.id:  # a node written as several entries
            matched[m.source_id] = node
            continue
        if (above.id if above is not None else None) != node.parent:
            continue
        if matched and node.tree != next(iter(matched.values())).tree:
            continue
        matched[m.source_id] = node
    if root.source_id not in matched:
        return None
    tree = storage(loom).tree_by_id(matched[root.source_id].tree)
    return (tree, matched) if tree is not None and tree.mode == conv.mode else None
