"""What the areas beside the core hold of a forgotten node, erased in the same
transaction: its search entry (the full-text index, and with it its embedding), the
gateway's memo of paths through it (the memo holds digests of the text and a
document's first characters), and document bodies.

This is the one place outside an area that writes its tables, by name: forgetting has
to reach every copy of a text, and an area the store never used has no tables, so
nothing is created here. Document revisions keep their content when the last node
holding it is deleted (the body is copied into `doc_contents` first); a redaction
erases the document body of the same content id too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..model import now
from ..store.forget import TOMBSTONE

if TYPE_CHECKING:
    from ..loom import Loom
    from ..store.forget import ForgetStore

#: area tables a forget may touch: vacuumed after it on PostgreSQL
_TABLES = ("search_entries", "search_tail", "search_pending", "gateway_paths",
           "gateway_buffers", "doc_contents", "agent_tool_calls", "agent_messages",
           "agent_spawns")
#: a redacted tool input, as the agents area keeps JSON
_REDACTED_JSON = '{"redacted":true}'


def tables(loom: Loom) -> list[str]:
    return sorted(loom.forgetting().existing(_TABLES))


def drop_nodes(loom: Loom, ids: Sequence[str], trees: Sequence[str],
               memo_trees: Sequence[str] = (), *, redacted: bool = False) -> None:
    """Erase the search entries of `ids`, and the gateway memo rows naming them (all of
    the memo of `memo_trees`: a redacted message is inside every later digest), and
    the agents' copies of their text (tool inputs, supervised messages, spawn tasks):
    deleted with deleted nodes, erased for redacted ones."""
    fs = loom.forgetting()
    have = fs.existing(_TABLES)
    _agents(fs, have, ids, redacted)
    if "search_entries" in have:
        for cond, args in fs.in_("entity", ids):
            if fs.dialect == "sqlite":
                fs.run("DELETE FROM search_text WHERE rowid IN (SELECT seq FROM search_entries"
                       f" WHERE {cond})", args)
            fs.run(f"DELETE FROM search_entries WHERE {cond}", args)
        for cond, args in fs.in_("node_id", ids):
            fs.run(f"DELETE FROM search_pending WHERE {cond}", args)
        if fs.dialect == "sqlite" and ids:
            # the full-text index keeps deleted words in its segments until they are
            # merged: merge them now, in this transaction (freed pages zeroed)
            fs.run("INSERT INTO search_text (search_text) VALUES ('optimize')")
    for table in ("gateway_paths", "gateway_buffers"):
        if table not in have:
            continue
        for cond, args in fs.in_("node_id", ids):
            fs.run(f"DELETE FROM {table} WHERE {cond}", args)
        for cond, args in fs.in_("tree_id", memo_trees):
            fs.run(f"DELETE FROM {table} WHERE {cond}", args)


def _agents(fs: ForgetStore, have: set[str], ids: Sequence[str], redacted: bool) -> None:
    if "agent_tool_calls" not in have:
        return
    for cond, args in fs.in_("node", ids):
        if redacted:
            fs.run(f"UPDATE agent_tool_calls SET input = ? WHERE {cond}", [_REDACTED_JSON, *args])
            fs.run(f"UPDATE agent_messages SET text = ?, original = ? WHERE {cond}",
                   ["[redacted]", "[redacted]", *args])
        else:
            fs.run(f"DELETE FROM agent_tool_calls WHERE {cond}", args)
            fs.run(f"DELETE FROM agent_messages WHERE {cond}", args)
    if redacted:
        return
    for column, table in (("result_node", "agent_tool_calls"), ("from_node", "agent_messages"),
                          ("parent_node", "agent_spawns"), ("summary_node", "agent_spawns")):
        for cond, args in fs.in_(column, ids):
            fs.run(f"DELETE FROM {table} WHERE {cond}", args)


def drop_tree(loom: Loom, tree: str) -> None:
    """A tree deleted whole: its gateway memo and the agents' rows about it go with it."""
    drop_nodes(loom, [], [tree], memo_trees=[tree])
    fs = loom.forgetting()
    if "agent_spawns" in fs.existing(("agent_spawns",)):
        fs.run("DELETE FROM agent_spawns WHERE child_tree = ? OR parent_tree = ?", (tree, tree))
        fs.run("DELETE FROM agent_tool_calls WHERE tree = ?", (tree,))


def keep_document_bodies(loom: Loom, content_ids: Sequence[str]) -> None:
    """Give each document revision whose content a deleted node held its own copy
    (`doc_contents`), so deleting the node leaves the revision whole."""
    fs = loom.forgetting()
    if "doc_revisions" not in fs.existing(("doc_revisions",)):
        return
    used: set[str] = set()
    for cond, args in fs.in_("r.content_id", content_ids):
        used |= {r[0] for r in fs.run(
            f"SELECT DISTINCT r.content_id FROM doc_revisions r WHERE {cond} AND NOT EXISTS"
            " (SELECT 1 FROM doc_contents c WHERE c.id = r.content_id)", args)}
    for cid in sorted(used):
        blocks = loom.content_body(cid)
        if blocks is not None:
            from .. import content as C

            fs.run("INSERT INTO doc_contents (id, body, created_at) VALUES (?, ?, ?)",
                   (cid, C.canonical(blocks).decode("utf-8"), now()))


def redact_documents(loom: Loom, content_id: str) -> None:
    """A redacted content is redacted in document bodies too."""
    fs = loom.forgetting()
    if "doc_contents" in fs.existing(("doc_contents",)):
        fs.run("UPDATE doc_contents SET body = ? WHERE id = ?", (TOMBSTONE, content_id))


def blob_held(loom: Loom, blob: str) -> bool:
    """Whether a document body still names the blob."""
    fs = loom.forgetting()
    if "doc_contents" not in fs.existing(("doc_contents",)):
        return False
    return bool(fs.run("SELECT 1 FROM doc_contents WHERE body LIKE ? LIMIT 1", (f"%{blob}%",)))
