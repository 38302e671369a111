"""SQLite's nodes: placement by segment, walks as rowid ranges, content inline.

The layout is shaped by what an append costs: each b-tree page it dirties is a frame
written to the WAL at commit. Nodes live in a rowid table keyed by
`segment << POS_BITS | position`, where a segment is a run of nodes each created from
the one before it: a thread grows at the right edge of its segment, its path is a few
rowid range scans, and only a node that starts a segment (a branch, a version, a root)
enters an index by parent (`nodes_starts`, which also lists a tree's segments).
Content is stored inline in the first node that used it and referenced by key from
the others (one unique index on the content id keeps it stored once). Hashes are
stored as raw 32-byte digests. See migration 0004 and docs/architecture.md.

The store remembers the places (key, slot, whether a child follows) of nodes written
or read lately, so an append after one reads nothing before its insert; a
transaction's places stay with its thread until it commits (`Connections.on_commit`).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ...errors import InvalidInput, NotFound
from ...model import Anchor, Node
from ..nodes import (
    HAS_SELECTIONS,
    HAS_SOURCES,
    SHAPE_HEAD,
    TOMBSTONE,
    ChainRow,
    ClimbRow,
    NodeStore,
    PathRow,
    ShapeRow,
)
from ..rows import build_nodes, bytes_to_hex, dumps, gc_paused, hex_to_bytes
from .connections import Connections, chunks, marks

#: a node's key is its segment number shifted left by POS_BITS, plus its position
POS_BITS = 20
POS_MASK = (1 << POS_BITS) - 1
#: a node's content: inline, or in the node it points at; a node holding neither is a
#: copy its owner redacted (`forget.redact_copies`) and reads as the tombstone, or as
#: its own scrubbed copy (a user's span redaction: `node_scrubs`)
BODY = ("coalesce(n.body, b.body, CASE WHEN n.body_key IS NULL THEN coalesce((SELECT s.body"
        f" FROM node_scrubs s WHERE s.node_id = n.id), '{TOMBSTONE}') END)")
NODE_COLS = (
    "n.id, n.tree_id, n.parent_id, n.slot_id, n.edited_from, n.depth, n.role, n.kind, "
    f"n.author, n.source, n.content_id, {BODY}, n.options, n.cache, "
    "n.flags, n.tokens, n.total_tokens, n.provenance, n.origin, n.created_at, n.chain_hash"
)
_WALK_COLS = f"n.id, n.slot_id, n.depth, n.role, n.kind, {BODY}, n.options, n.cache, n.flags"
#: a node with its content, wherever the content is stored
NODE_FROM = "nodes n LEFT JOIN nodes b ON b.key = n.body_key"
#: the first node of a segment (the condition of the `nodes_starts` index)
STARTS = "(parent_key IS NOT NULL OR parent_id IS NULL)"


def tree_rows(tree: str = "?") -> str:
    """FROM clause of the nodes `n` of a tree: the key ranges of its segments, in key
    order (so the ranges are read in the file's order)."""
    return (
        f"(SELECT key FROM nodes WHERE tree_id = {tree} AND {STARTS} ORDER BY key) g"
        f" JOIN nodes n ON n.key BETWEEN g.key AND g.key + {POS_MASK}"
    )

#: (key, id) of every version of the slot bound to ?1
_VERSION_KEYS = (
    "SELECT key, id FROM nodes WHERE id = ?1 UNION ALL"
    " SELECT key, id FROM nodes WHERE slot_id = ?1 AND edited_from IS NOT NULL"
)
#: whether a row already takes the place after node `p` in its segment
_CONTINUED = "EXISTS (SELECT 1 FROM nodes c WHERE c.key = p.key + 1)"
#: the node holding the body of the content id bound to the statement's first parameter
_HOLDER = "SELECT key FROM nodes WHERE content_id = ? AND body IS NOT NULL"

def _raw(body: str | bytes | None) -> bytes | None:
    """Stored body bytes exactly as found (a tampered row may hold anything)."""
    if body is None or isinstance(body, bytes):
        return body
    return body.encode("utf-8", "surrogatepass")



#: what a node's children need to know of it: (key, slot, whether a child follows it)
Place = tuple[int, str, bool]


class SQLiteNodes(NodeStore):
    """`NodeStore` on SQLite; see the module docstring."""

    def __init__(self, connections: Connections) -> None:
        self.c = connections
        #: longest run of nodes in one segment (tests lower it to reach the boundary)
        self.segment_length = POS_MASK + 1
        #: places of committed nodes written or read lately (a node's place never
        #: changes); a transaction's own stay with its thread until it commits
        self._places: dict[str, Place] = {}
        self._places_lock = threading.Lock()
        connections.on_commit = self._committed

    def _committed(self, pending: dict[str, Place]) -> None:
        with self._places_lock:
            for node_id, place in pending.items():
                self._keep_place(node_id, place)

    def forget_places(self, ids: Iterable[str]) -> None:
        """Drop the remembered places of deleted nodes."""
        with self._places_lock:
            for node_id in ids:
                self._places.pop(node_id, None)

    # -- content ---------------------------------------------------------------------
    def get_content(self, content_id: str) -> bytes | None:
        row = self.c.db.execute(
            "SELECT body FROM nodes WHERE content_id = ? AND body IS NOT NULL",
            (hex_to_bytes(content_id),),
        ).fetchone()
        return None if row is None else row[0].encode("utf-8")

    # -- nodes -----------------------------------------------------------------------
    def insert_node(self, node: Node, body: bytes, flags: int) -> None:
        # Written optimistically, one statement in the common case: after its parent in
        # the parent's segment, with the content inline. The constraints say when not:
        # the place after the parent is taken (a branch: start a segment) or the content
        # is stored already (point at the node that holds it).
        pkey, pslot, continued = self._place(node.parent) if node.parent else (None, None, True)
        follow = not continued and pkey & POS_MASK < self.segment_length - 1  # type: ignore[operator]
        seg_key: int | None = None
        holder: int | None = None
        while True:
            if follow:
                key, parent_key = pkey + 1, None  # type: ignore[operator]
            else:
                if seg_key is None:  # the next segment: above every key in the store
                    last = self.c.db.execute("SELECT max(key) FROM nodes").fetchone()[0]
                    seg_key = ((last or 0) >> POS_BITS) + 1 << POS_BITS
                key, parent_key = seg_key, pkey
            try:
                self.c.db.execute(
                    "INSERT INTO nodes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (key, node.id, node.tree, node.parent, parent_key, node.slot, pslot,
                     node.edited_from, node.depth, node.role, node.kind, node.author,
                     node.source, hex_to_bytes(node.content_id),
                     None if holder else body.decode("utf-8"), holder, dumps(node.options),
                     int(node.cache), flags, node.tokens, node.total_tokens,
                     dumps(node.provenance), dumps(node.origin), node.created_at,
                     hex_to_bytes(node.chain_hash)),
                )
                break
            except sqlite3.IntegrityError as exc:
                column = str(exc).rpartition(".")[2]
                if column == "key" and follow:
                    follow = False
                elif column == "content_id" and holder is None:
                    holder = self.c.db.execute(
                        _HOLDER, (hex_to_bytes(node.content_id),)
                    ).fetchone()[0]
                elif column == "id":
                    raise InvalidInput(f"node {node.id}", "a node with this id is already in the store") from None
                else:
                    raise
        self._remember_place(node.id, key, node.slot, False)
        if follow:
            self._remember_place(node.parent, pkey, pslot, True)  # type: ignore[arg-type]
        if node.sources:
            self.c.db.executemany(
                "INSERT INTO node_sources VALUES (?,?,?,?,?)",
                [(node.id, i, src, role, node.tree) for i, (src, role) in enumerate(node.sources)],
            )
        if node.selections:
            self.c.db.executemany(
                "INSERT INTO node_selections VALUES (?,?,?,?)",
                [(node.id, slot, ver, node.tree) for slot, ver in node.selections.items()],
            )

    def _place(self, node_id: str) -> Place:
        """(key, slot, whether a child already follows it in its segment) of a node:
        where its children go and what they hang from. The last part is a hint (another
        writer may have added a child since): inserting finds out for sure."""
        pending = self.c.handed_out()
        place = pending.get(node_id) if pending else None
        if place is None:
            place = self._places.get(node_id)
        if place is None:
            row = self.c.db.execute(
                f"SELECT key, slot_id, {_CONTINUED} FROM nodes p WHERE id = ?", (node_id,)
            ).fetchone()
            if row is None:
                raise NotFound("parent node", node_id)
            place = self._remember_place(node_id, row[0], row[1], bool(row[2]))
        return place

    def _remember_place(self, node_id: str, key: int, slot: str, continued: bool) -> Place:
        """Remember a node's place: for everyone when no transaction of this thread is
        open, else for this transaction only until it commits."""
        place = (key, slot, continued)
        pending = self.c.handed_out()
        if pending is not None:
            pending[node_id] = place
        else:
            with self._places_lock:
                self._keep_place(node_id, place)
        return place

    def _keep_place(self, node_id: str, place: Place) -> None:
        """Store a committed place (the caller holds `_places_lock`), oldest out first."""
        places = self._places
        if len(places) >= 16384 and node_id not in places:
            places.pop(next(iter(places)))
        places[node_id] = place

    def anchor(self, node_id: str) -> Anchor | None:
        row = self.c.db.execute(
            "SELECT id, tree_id, slot_id, depth, total_tokens, chain_hash, key,"
            f" {_CONTINUED} FROM nodes p WHERE id = ?",
            (node_id,),
        ).fetchone()
        if row is None:
            return None
        self._remember_place(node_id, row[6], row[2], bool(row[7]))
        return Anchor(row[0], row[1], row[2], row[3], row[4], bytes_to_hex(row[5]))

    def get_nodes(self, ids: Sequence[str]) -> dict[str, Node]:
        rows: list[tuple[Any, ...]] = []
        for chunk in chunks(list(ids)):
            rows += self.c.db.execute(
                f"SELECT {NODE_COLS} FROM {NODE_FROM} WHERE n.id IN ({marks(len(chunk))})",
                chunk,
            ).fetchall()
        return self._nodes(rows)

    def _nodes(self, rows: list[tuple[Any, ...]]) -> dict[str, Node]:
        return build_nodes(self, rows)

    def node_ids_with_prefix(self, prefix: str, limit: int) -> list[str]:
        rows = self.c.db.execute(
            "SELECT id FROM nodes WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
            (prefix, prefix + "\uffff", limit),
        )
        return [r[0] for r in rows]

    def climb(self, tree: str, ends: Sequence[str], steps: int, source: str) -> list[ClimbRow]:
        a, b = ends
        return [(r[0], r[1], r[2], r[3], bool(r[4])) for r in self.c.db.execute(
            "WITH RECURSIVE up(start, id, parent_id, slot_id, depth, step) AS ("
            " SELECT id, id, parent_id, slot_id, depth, 0 FROM nodes WHERE id IN (?, ?)"
            " AND tree_id = ?"
            " UNION ALL SELECT u.start, n.id, n.parent_id, n.slot_id, n.depth, u.step + 1"
            " FROM up u JOIN nodes n ON n.id = u.parent_id WHERE u.step < ?)"
            " SELECT u.start, u.id, u.slot_id, u.depth, EXISTS (SELECT 1 FROM node_sources s"
            " WHERE s.node_id = u.id AND s.source_id = ? AND s.role = 'context') FROM up u",
            (a, b, tree, steps, source))]

    def walk(self, node_id: str, min_depth: int = 0) -> list[PathRow]:
        # climb segment by segment (the first node of each names its parent's key), then
        # read each segment's part of the path as one rowid range; a segment whose first
        # node is at or above `min_depth` is the last one climbed
        return self.c.db.execute(
            "WITH RECURSIVE segs(lo, hi) AS ("
            f" SELECT (key >> {POS_BITS}) << {POS_BITS}, key FROM nodes WHERE id = ?1"
            " UNION ALL"
            f" SELECT (s.parent_key >> {POS_BITS}) << {POS_BITS}, s.parent_key FROM segs"
            " JOIN nodes s ON s.key = segs.lo WHERE s.parent_key IS NOT NULL AND s.depth > ?2)"
            f" SELECT {_WALK_COLS} FROM segs JOIN nodes n ON n.key BETWEEN segs.lo AND segs.hi"
            " LEFT JOIN nodes b ON b.key = n.body_key WHERE n.depth >= ?2 ORDER BY n.depth DESC",
            (node_id, min_depth),
        ).fetchall()

    def path_rows(self, ids: Sequence[str]) -> dict[str, PathRow]:
        out: dict[str, tuple[Any, ...]] = {}
        for chunk in chunks(list(ids)):
            for row in self.c.db.execute(
                f"SELECT {_WALK_COLS} FROM {NODE_FROM} WHERE n.id IN ({marks(len(chunk))})",
                chunk,
            ):
                out[row[0]] = row
        return out

    def node_selections(self, ids: Sequence[str]) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        for chunk in chunks(list(ids)):
            for node, slot, version in self.c.db.execute(
                "SELECT node_id, slot_id, version_id FROM node_selections"
                f" WHERE node_id IN ({marks(len(chunk))})",
                chunk,
            ):
                out.setdefault(node, {})[slot] = version
        return out

    def node_sources(self, ids: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
        out: dict[str, list[tuple[str, str]]] = {}
        for chunk in chunks(list(ids)):
            for node, source, role in self.c.db.execute(
                "SELECT node_id, source_id, role FROM node_sources"
                f" WHERE node_id IN ({marks(len(chunk))}) ORDER BY node_id, position",
                chunk,
            ):
                out.setdefault(node, []).append((source, role))
        return out

    def children(self, slot: str) -> list[str]:
        # children that start a segment are indexed; one that continues the segment of
        # a version of the slot is the row right after that version
        rows = self.c.db.execute(
            "SELECT id FROM (SELECT id, created_at FROM nodes"
            " WHERE tree_id = (SELECT tree_id FROM nodes WHERE id = ?1) AND parent_slot = ?1"
            f" AND {STARTS} AND edited_from IS NULL"
            f" UNION ALL SELECT c.id, c.created_at FROM ({_VERSION_KEYS}) v"
            " JOIN nodes c ON c.key = v.key + 1 AND c.parent_id = v.id AND c.parent_key IS NULL)"
            " ORDER BY created_at, id",
            (slot,),
        )
        return [r[0] for r in rows]

    def versions(self, slot: str) -> list[str]:
        rows = self.c.db.execute(
            "SELECT id FROM nodes WHERE id = ? UNION ALL SELECT id FROM"
            " (SELECT id FROM nodes WHERE slot_id = ? AND edited_from IS NOT NULL"
            " ORDER BY created_at, id)",
            (slot, slot),
        )
        return [r[0] for r in rows]

    def versions_of(self, slots: Sequence[str], tree_id: str) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {slot: [slot] for slot in slots}
        for chunk in chunks(list(out)):
            rows = self.c.db.execute(
                "SELECT slot_id, id FROM nodes WHERE edited_from IS NOT NULL"
                f" AND slot_id IN ({marks(len(chunk))}) ORDER BY created_at, id", chunk)
            for slot, node in rows:
                out[slot].append(node)
        return out

    def _whole_tree(self, tree_id: str) -> str:
        """FROM clause for reading all of a tree: its segments' key ranges, or one pass
        over the table when the tree holds most of the store's segments (a big, bushy
        tree: one seek per short segment then costs more than reading past the rest)."""
        mine = self.c.db.execute(
            f"SELECT count(*) FROM nodes WHERE tree_id = ? AND {STARTS}", (tree_id,)
        ).fetchone()[0]
        last = self.c.db.execute("SELECT max(key) FROM nodes").fetchone()[0] or 0
        if mine > 1000 and mine * 4 > last >> POS_BITS:
            return "nodes n WHERE n.tree_id = ?"
        return tree_rows()

    def leaves(self, tree_id: str) -> list[str]:
        # one scan of the tree, then sets: cheaper than an anti-join per node when only
        # segment starts are indexed by parent
        with gc_paused():
            return self._leaves(tree_id)

    def _leaves(self, tree_id: str) -> list[str]:
        rows = self.c.db.execute(
            f"SELECT n.id, n.created_at, n.slot_id, n.parent_slot FROM {self._whole_tree(tree_id)}",
            (tree_id,),
        ).fetchall()
        parents = {r[3] for r in rows}
        return [i for _, i in sorted((r[1], r[0]) for r in rows if r[2] not in parents)]

    def branch_points(self, tree_id: str) -> list[str]:
        with gc_paused():
            return self._branch_points(tree_id)

    def _branch_points(self, tree_id: str) -> list[str]:
        rows = self.c.db.execute(
            "SELECT n.id, n.created_at, n.parent_slot, n.edited_from IS NULL"
            f" FROM {self._whole_tree(tree_id)}",
            (tree_id,),
        ).fetchall()
        count: dict[str, int] = {}
        for r in rows:
            if r[3] and r[2] is not None:
                count[r[2]] = count.get(r[2], 0) + 1
        return [i for _, i in sorted((r[1], r[0]) for r in rows
                                     if r[3] and count.get(r[0], 0) >= 2)]

    def tree_nodes(self, tree_id: str) -> Iterator[Node]:
        cursor = self.c.db.execute(
            f"SELECT {NODE_COLS} FROM {tree_rows()} LEFT JOIN nodes b ON b.key = n.body_key"
            " ORDER BY n.created_at, n.id",
            (tree_id,),
        )
        while batch := cursor.fetchmany(2000):
            yield from self._nodes(batch).values()

    def tree_shape(self, tree_id: str) -> list[ShapeRow]:
        return self.c.db.execute(
            "SELECT n.id, n.parent_id, n.slot_id, n.edited_from, n.role, n.kind,"
            f" substr({BODY}, 1, {SHAPE_HEAD}) FROM {tree_rows()}"
            " LEFT JOIN nodes b ON b.key = n.body_key ORDER BY n.created_at, n.id",
            (tree_id,),
        ).fetchall()

    def chain_rows(self, tree_id: str) -> Iterator[ChainRow]:
        cursor = self.c.db.execute(
            f"SELECT n.id, n.parent_id, n.content_id, {BODY}, n.created_at,"
            " n.author, n.role, n.kind, n.edited_from, n.options, n.provenance, n.chain_hash,"
            f" n.flags FROM {tree_rows()} LEFT JOIN nodes b ON b.key = n.body_key",
            (tree_id,),
        )
        while batch := cursor.fetchmany(5000):
            sources = self.node_sources([r[0] for r in batch if r[12] & HAS_SOURCES])
            selections = self.node_selections([r[0] for r in batch if r[12] & HAS_SELECTIONS])
            for r in batch:
                yield {
                    "id": r[0], "parent": r[1],
                    "content_id": None if r[2] is None else bytes_to_hex(r[2]),
                    "body": _raw(r[3]),
                    "created_at": r[4], "author": r[5], "role": r[6], "kind": r[7],
                    "edited_from": r[8], "options": r[9], "provenance": r[10],
                    "chain_hash": bytes_to_hex(r[11]), "sources": sources.get(r[0], []),
                    "selections": selections.get(r[0], {}),
                }

    def subtree(self, slot: str) -> list[str]:
        # three ways down from a slot: children starting a segment, and the row after
        # the original or after an edited version when it continues that segment
        found = self.c.db.execute("SELECT tree_id FROM nodes WHERE id = ?", (slot,)).fetchone()
        if found is None:
            return []
        rows = self.c.db.execute(
            "WITH RECURSIVE s(slot) AS (SELECT ?1"
            " UNION SELECT c.slot_id FROM s JOIN nodes c"
            " ON c.tree_id = ?2 AND c.parent_slot = s.slot"
            " AND (c.parent_key IS NOT NULL OR c.parent_id IS NULL)"
            " UNION SELECT c.slot_id FROM s JOIN nodes v ON v.id = s.slot"
            " JOIN nodes c ON c.key = v.key + 1 AND c.parent_id = v.id AND c.parent_key IS NULL"
            " UNION SELECT c.slot_id FROM s JOIN nodes v"
            " ON v.slot_id = s.slot AND v.edited_from IS NOT NULL"
            " JOIN nodes c ON c.key = v.key + 1 AND c.parent_id = v.id AND c.parent_key IS NULL)"
            " SELECT n.id FROM s JOIN nodes n ON n.id = s.slot UNION ALL"
            " SELECT v.id FROM s JOIN nodes v ON v.slot_id = s.slot AND v.edited_from IS NOT NULL",
            (slot, found[0]),
        )
        return [r[0] for r in rows]
