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

A session forked by its own tool comes back the same way: Claude Code's
`--fork-session` writes a new session file holding the forked session's lines again
(same uuids and times, a new `sessionId`, each copied reply naming the session it was
asked in as `requestSessionId`). The parser names those sessions
(`ImportedConversation.forked_from`); a message's node in them is the id their import
derived from the same source id, so the copied prefix is the nodes already stored and
only what the fork added is written, under the fork point, in the same tree.

A line is matched only against nodes of trees the importing caller sees (an upload
by a user of a store with users), by exact id, same role and same parent: anything
else is written as a conversation of its own.

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
    loom: Loom, conv: ImportedConversation, earlier: Callable[[ImportedMessage], str],
    forked: Callable[[ImportedMessage], list[str]] | None = None,
    sees: Callable[[str], bool] | None = None,
) -> tuple[Tree, dict[str, Node]] | None:
    """(the tree, source id -> stored node) of the messages of `conv` that are stored
    nodes, when its root is one; None otherwise. `earlier(message)` is the node id an
    earlier import gave the message under its `earlier_source_id`; `forked(message)`
    the ids the imports of the conversations it was forked from gave it (the same
    source id in their scope: `ImportedConversation.forked_from`). Only nodes of trees
    the importing caller sees (`sees(tree id)`; None: every tree) are matched, each by
    its exact id, role and parent."""
    wanted: dict[str, list[str]] = {}
    for m in conv.messages:
        ids = [m.same_as] if m.same_as else [earlier(m)] if m.earlier_source_id else []
        if forked is not None:
            ids += forked(m)
        if ids:
            wanted[m.source_id] = ids
    root = conv.messages[0] if conv.messages else None
    if root is None or root.source_id not in wanted:
        return None
    if not storage(loom).nodes_by_id(wanted[root.source_id]):
        return None  # the common case, a session that never left this store: one look-up
    found = storage(loom).nodes_by_id(sorted({i for ids in wanted.values() for i in ids}))
    matched: dict[str, Node] = {}
    tree: str | None = None
    for m in conv.messages:  # parents come first
        if m.parent_source_id is not None and m.parent_source_id not in matched:
            continue
        above = matched.get(m.parent_source_id) if m.parent_source_id is not None else None
        for candidate in wanted.get(m.source_id, ()):
            node = found.get(candidate)
            if node is None or node.role != m.role or (tree or node.tree) != node.tree:
                continue
            if sees is not None and not sees(node.tree):
                continue
            if (above is not None and above.id == node.id  # a node written as several entries
                    or (above.id if above is not None else None) == node.parent):
                matched[m.source_id], tree = node, node.tree
                break
    if root.source_id not in matched:
        return None
    stored = storage(loom).tree_by_id(matched[root.source_id].tree)
    return (stored, matched) if stored is not None and stored.mode == conv.mode else None
