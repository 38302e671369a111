"""PostgreSQL's nodes: contents in their own table, walks as one recursive statement.

Semantics mirror `sqlite/nodes.py` row for row (same results, same order). Node ids
are unique in the store, but the primary keys carry tree_id (Citus can distribute by
tree, see docs/postgres.md), so `insert_node` refuses a known id itself. A store split
by tree (`partitions=N`, partitions.py) pins walk, children and subtree to the node's
tree, so each prunes to one partition.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ...errors import InvalidInput
from ...model import Anchor, Node
from ..nodes import (
    DEPTH,
    HAS_SELECTIONS,
    HAS_SOURCES,
    REDACTED_COPY,
    SHAPE_HEAD,
    TOMBSTONE,
    ChainRow,
    ClimbRow,
    NodeStore,
    PathRow,
    ShapeRow,
)
from ..refs import REF_LOG
from ..rows import build_nodes, bytes_to_hex, dumps, hex_to_bytes
from .connections import Connections

_PAGE = 2000

#: a node's content (`c`: its `contents` row, joined by `_CONTENT`); a copy its owner
#: redacted (flag REDACTED_COPY) reads as the tombstone, whatever the row holds
_OWN = f"n.flags & {REDACTED_COPY} = 0"
#: (or as its own scrubbed copy: a user's span redaction, `node_scrubs`)
_COPY = ("coalesce((SELECT s.body FROM node_scrubs s WHERE s.tree_id = n.tree_id"
         f" AND s.node_id = n.id), '{TOMBSTONE}')")
_BODY_OF = f"CASE WHEN {_OWN} THEN c.body ELSE {_COPY} END"
_CONTENT = "LEFT JOIN contents c ON c.id = n.content_id"
#: the same, one index probe of `contents` per node found, whatever the planner
#: estimates: the nodes read by id (an append's parent, an index batch) are few, but a
#: plan made from statistics that lag the store's size (a generic plan, or `nodes`
#: not analyzed since it grew) estimated hundreds and hashed every content row, so
#: such a read grew with the store (OFFSET 0 keeps the subquery a probe, not a join)
_CONTENT_PROBE = ("LEFT JOIN LATERAL (SELECT c.id, c.body FROM contents c"
                  " WHERE c.id = n.content_id OFFSET 0) c ON true")
#: the nodes `_CONTENT` finds a body for (a node whose content row is missing is left out)
_HELD = f"(c.id IS NOT NULL OR NOT {_OWN})"
_NODE_COLS = (
    "n.id, n.tree_id, n.parent_id, n.slot_id, n.edited_from, n.depth, n.role, n.kind, "
    f"n.author, n.source, n.content_id, {_BODY_OF}, n.options, n.cache, n.flags, n.tokens, "
    "n.total_tokens, n.provenance, n.origin, n.created_at, n.chain_hash"
)
_PATH_COLS = f"n.id, n.slot_id, n.depth, n.role, n.kind, {_BODY_OF}, n.options, n.cache, n.flags"
_BODY = (f"CASE WHEN {_OWN} THEN (SELECT c.body FROM contents c WHERE c.id = n.content_id)"
         f" ELSE {_COPY} END").replace("{", "{{").replace("}", "}}")  # for .format
# The created-from chain, head first, in one statement: each step is one probe of the
# primary key (id, tree_id) for the parent, as a LATERAL subquery with LIMIT 1 (the
# start, an id unique in the store, has LIMIT 1 too), so the plan stays index-driven
# however the planner sizes the table or the chain: on a table not yet analyzed, a join
# there let it seq-scan the whole nodes table at every step (6.1 s for 5,000 steps),
# or hash it whole for every walk, and a chain sized from the table's guesses cost
# enough to be JIT-compiled. The recursion carries no bodies (it is the narrow,
# per-step part); each row's body is then one probe of contents' primary key. A node
# whose content row is missing is left out of the result (the chain continues past
# it), as in the SQLite backend. The recursion yields the chain head first; `walk`
# checks that order instead of sorting on the server (a sort of 10k bodies spills
# past work_mem).
_STEP_COLS = (
    "id, tree_id, parent_id, slot_id, depth, role, kind, content_id, options, cache, flags")
_WALK_STEP = f"SELECT {', '.join('n.' + c.strip() for c in _STEP_COLS.split(','))} FROM nodes n"
_WALK = (
    f"WITH RECURSIVE w({_STEP_COLS}) AS ("
    f" ({_WALK_STEP} WHERE n.id = %s{{pin}} LIMIT 1)"
    f" UNION ALL SELECT p.* FROM w CROSS JOIN LATERAL ({_WALK_STEP}"
    f" WHERE n.id = w.parent_id AND n.tree_id = w.tree_id{{rpin}}{{bound}} LIMIT 1) p)"
    # (OFFSET 0 keeps the body's probe from being run again for the filter)
    f" SELECT * FROM (SELECT n.id, n.slot_id, n.depth, n.role, n.kind, {_BODY} AS body,"
    f" n.options, n.cache, n.flags FROM w n OFFSET 0) r WHERE body IS NOT NULL"
)
# Two ends and their ancestors, a few steps up (a merge's common ancestor): each step
# probes the primary key (id, tree_id) for the parent; the step is a LATERAL subquery
# with LIMIT 1 so the planner cannot turn it into a hash join over the whole table.
_CLIMB = (
    "WITH RECURSIVE up(start, id, parent_id, slot_id, depth, step) AS ("
    " SELECT id, id, parent_id, slot_id, depth, 0 FROM nodes WHERE tree_id = %s"
    " AND id IN (%s, %s)"
    " UNION ALL SELECT u.start, p.id, p.parent_id, p.slot_id, p.depth, u.step + 1"
    " FROM up u CROSS JOIN LATERAL (SELECT n.id, n.parent_id, n.slot_id, n.depth"
    " FROM nodes n WHERE n.id = u.parent_id AND n.tree_id = %s LIMIT 1) p WHERE u.step < %s)"
    " SELECT u.start, u.id, u.slot_id, u.depth, EXISTS (SELECT 1 FROM node_sources s"
    " WHERE s.node_id = u.id AND s.source_id = %s AND s.role = 'context') FROM up u"
)
_PUT_CONTENT = "INSERT INTO contents VALUES (%s, %s) ON CONFLICT DO NOTHING"
_CHILDREN = (
    "SELECT id FROM nodes WHERE parent_slot = %s AND edited_from IS NULL"
    " ORDER BY created_at, id"
)
_LEAVES = (
    "SELECT n.id FROM nodes n WHERE n.tree_id = %s AND NOT EXISTS"
    " (SELECT 1 FROM nodes c WHERE c.parent_slot = n.slot_id AND c.tree_id = n.tree_id)"
    " ORDER BY n.created_at, n.id"
)
#: pinned to the node's tree, in a store split by tree (partitions.py): one partition
_PIN = " AND n.tree_id = %s"
#: a walk that stops at a depth (the end of a long path, as a page of it needs)
_BOUND = " AND n.depth >= %s"
_WALK_PINNED = _WALK.format(pin=_PIN, rpin=_PIN, bound="")
_CHILDREN_PINNED = (
    "SELECT id FROM nodes WHERE parent_slot = %s AND tree_id = %s AND edited_from IS NULL"
    " ORDER BY created_at, id"
)
#: the hot reads by name, for `explain` (tests and tools check their plans)
#: nodes by id (an append's parent, a batch to index) and their path rows
_BY_ID = (f"SELECT {_NODE_COLS} FROM nodes n {_CONTENT_PROBE} WHERE n.id = ANY(%s::text[])"
          f" AND {_HELD}")
_PATH_BY_ID = (f"SELECT {_PATH_COLS} FROM nodes n {_CONTENT_PROBE}"
               f" WHERE n.id = ANY(%s::text[]) AND {_HELD}")
HOT_QUERIES = {"walk": _WALK.format(pin="", rpin="", bound=""), "children": _CHILDREN, "leaves": _LEAVES,
               "nodes": _BY_ID, "path_rows": _PATH_BY_ID,
               "walk_pinned": _WALK_PINNED, "children_pinned": _CHILDREN_PINNED, "climb": _CLIMB,
               "ref_log_pinned": REF_LOG.replace("?", "%s")
               + " WHERE tree_id = %s AND ref_name = %s ORDER BY seq"}


class PostgresNodes(NodeStore):
    """`NodeStore` on PostgreSQL; see the module docstring."""

    def __init__(self, connections: Connections) -> None:
        self.c = connections

    # -- content ---------------------------------------------------------------------
    def get_content(self, content_id: str) -> bytes | None:
        row = self.c.fetch_one("SELECT body FROM contents WHERE id = %s", (hex_to_bytes(content_id),))
        return None if row is None else row[0].encode("utf-8")

    # -- nodes -----------------------------------------------------------------------
    def insert_node(self, node: Node, body: bytes, flags: int) -> None:
        content = (hex_to_bytes(node.content_id), body.decode("utf-8"))
        values: tuple[Any, ...] = (
            node.id, node.tree, node.parent, node.slot, node.parent, node.tree, node.edited_from,
            node.depth, node.role, node.kind, node.author, node.source,
            hex_to_bytes(node.content_id), dumps(node.options), int(node.cache), flags,
            node.tokens, node.total_tokens, dumps(node.provenance), dumps(node.origin),
            node.created_at, hex_to_bytes(node.chain_hash),
        )
        # the parent's slot is read in the same statement; a node id already used in
        # any tree is refused (the keys alone only make it unique within a tree)
        select = (
            "SELECT %s, %s, %s, %s, (SELECT p.slot_id FROM nodes p WHERE p.id = %s"
            " AND p.tree_id = %s), %s, %s::integer, %s, %s, %s, %s, %s::bytea, %s,"
            " %s::integer, %s::integer, %s::integer, %s::bigint, %s, %s, %s, %s::bytea"
        )
        if self.c.citus:  # Citus plans no subquery inside an INSERT: read the slot first
            self.c.run(_PUT_CONTENT, content)
            row = self.c.fetch_one("SELECT slot_id FROM nodes WHERE id = %s AND tree_id = %s",
                            (node.parent, node.tree)) if node.parent else None
            values = (*values[:4], row[0] if row else None, *values[6:])
            sql = f"INSERT INTO nodes VALUES ({', '.join(['%s'] * len(values))})"
        else:
            # the content goes in the same statement (one round trip per node)
            sql = (f"WITH c AS ({_PUT_CONTENT}) INSERT INTO nodes {select}"
                   " WHERE NOT EXISTS (SELECT 1 FROM nodes WHERE id = %s)")
            values = (*content, *values, node.id)
        if not self.c.run(sql, values).rowcount:
            raise InvalidInput(f"node {node.id}", "a node with this id is already in the store")
        if node.sources:
            self.c.run_many(
                "INSERT INTO node_sources VALUES (%s,%s,%s,%s,%s)",
                [(node.id, node.tree, i, src, role) for i, (src, role) in enumerate(node.sources)],
            )
        if node.selections:
            self.c.run_many(
                "INSERT INTO node_selections VALUES (%s,%s,%s,%s)",
                [(node.id, node.tree, slot, ver) for slot, ver in node.selections.items()],
            )

    def anchor(self, node_id: str) -> Anchor | None:
        row = self.c.fetch_one(
            "SELECT id, tree_id, slot_id, depth, total_tokens, chain_hash FROM nodes WHERE id = %s",
            (node_id,),
        )
        return None if row is None else Anchor(
            row[0], row[1], row[2], row[3], row[4], bytes_to_hex(row[5]))

    def get_nodes(self, ids: Sequence[str]) -> dict[str, Node]:
        if not ids:
            return {}
        return self._nodes(self.c.fetch_all(_BY_ID, (list(ids),)))

    def _nodes(self, rows: list[tuple[Any, ...]]) -> dict[str, Node]:
        return build_nodes(self, rows)

    def node_ids_with_prefix(self, prefix: str, limit: int) -> list[str]:
        rows = self.c.fetch_all(
            "SELECT id FROM nodes WHERE id >= %s AND id < %s ORDER BY id LIMIT %s",
            (prefix, prefix + "\uffff", limit),
        )
        return [r[0] for r in rows]

    def climb(self, tree: str, ends: Sequence[str], steps: int, source: str) -> list[ClimbRow]:
        a, b = ends
        return [(r[0], r[1], r[2], r[3], bool(r[4])) for r in self.c.fetch_all(
            _CLIMB, (tree, a, b, tree, steps, source))]

    def _tree_of(self, node_id: str) -> str | None:
        row = self.c.fetch_one("SELECT tree_id FROM nodes WHERE id = %s", (node_id,))
        return None if row is None else row[0]

    def walk(self, node_id: str, min_depth: int = 0) -> list[PathRow]:
        bound, extra = (_BOUND, (min_depth,)) if min_depth > 0 else ("", ())
        if not (self.c.citus or self.c.split):
            rows = self.c.fetch_all(_WALK.format(pin="", rpin="", bound=bound),
                                    (node_id, *extra))
        else:
            tree = self._tree_of(node_id)
            if tree is None:
                return []
            if self.c.split:  # every step in the tree's partition
                rows = self.c.fetch_all(_WALK_PINNED if not bound else
                                        _WALK.format(pin=_PIN, rpin=_PIN, bound=bound),
                                        (node_id, tree, tree, *extra))
            else:
                rows = self.c.fetch_all(_WALK.format(pin=_PIN, rpin="", bound=bound),
                                        (node_id, tree, *extra))
        if not all(a[DEPTH] > b[DEPTH] for a, b in zip(rows, rows[1:], strict=False)):
            rows.sort(key=lambda r: -r[DEPTH])  # depth strictly decreases from the head
        return rows

    def path_rows(self, ids: Sequence[str]) -> dict[str, PathRow]:
        if not ids:
            return {}
        return {r[0]: r for r in self.c.fetch_all(_PATH_BY_ID, (list(ids),))}

    def node_selections(self, ids: Sequence[str]) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        if not ids:
            return out
        for node, slot, version in self.c.fetch_all(
            "SELECT node_id, slot_id, version_id FROM node_selections"
            " WHERE node_id = ANY(%s::text[]) ORDER BY node_id, slot_id",
            (list(ids),),
        ):
            out.setdefault(node, {})[slot] = version
        return out

    def node_sources(self, ids: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
        out: dict[str, list[tuple[str, str]]] = {}
        if not ids:
            return out
        for node, source, role in self.c.fetch_all(
            "SELECT node_id, source_id, role FROM node_sources"
            " WHERE node_id = ANY(%s::text[]) ORDER BY node_id, position",
            (list(ids),),
        ):
            out.setdefault(node, []).append((source, role))
        return out

    def children(self, slot: str) -> list[str]:
        if self.c.split:
            tree = self._tree_of(slot)
            rows = self.c.fetch_all(_CHILDREN_PINNED, (slot, tree)) if tree else []
            return [r[0] for r in rows]
        rows = self.c.fetch_all(_CHILDREN, (slot,))
        return [r[0] for r in rows]

    def versions(self, slot: str) -> list[str]:
        rows = self.c.fetch_all(
            "SELECT id FROM (SELECT id, 0 AS k, '' AS at FROM nodes WHERE id = %s"
            " UNION ALL SELECT id, 1, created_at FROM nodes"
            " WHERE slot_id = %s AND edited_from IS NOT NULL) v ORDER BY k, at, id",
            (slot, slot),
        )
        return [r[0] for r in rows]

    def children_of(self, slots: Sequence[str], tree_id: str) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {slot: [] for slot in slots}
        for parent, node in self.c.fetch_all(
                "SELECT parent_slot, id FROM nodes WHERE tree_id = %s"
                " AND parent_slot = ANY(%s::text[]) AND edited_from IS NULL"
                " ORDER BY created_at, id", (tree_id, list(out))):
            out[parent].append(node)
        return out

    def versions_of(self, slots: Sequence[str], tree_id: str) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {slot: [slot] for slot in slots}
        for slot, node in self.c.fetch_all(
                "SELECT slot_id, id FROM nodes WHERE tree_id = %s"
                " AND slot_id = ANY(%s::text[]) AND edited_from IS NOT NULL"
                " ORDER BY created_at, id", (tree_id, list(out))):
            out[slot].append(node)
        return out

    def leaves(self, tree_id: str) -> list[str]:
        rows = self.c.fetch_all(_LEAVES, (tree_id,))
        return [r[0] for r in rows]

    def branch_points(self, tree_id: str) -> list[str]:
        rows = self.c.fetch_all(
            "SELECT p.id FROM nodes p JOIN (SELECT parent_slot FROM nodes"
            " WHERE tree_id = %s AND parent_slot IS NOT NULL AND edited_from IS NULL"
            " GROUP BY parent_slot HAVING count(*) >= 2) b ON p.id = b.parent_slot"
            " WHERE p.tree_id = %s AND p.edited_from IS NULL ORDER BY p.created_at, p.id",
            (tree_id, tree_id),
        )
        return [r[0] for r in rows]

    def _pages(self, cols: str, held: str, tree_id: str) -> Iterator[list[tuple[Any, ...]]]:
        """A tree's nodes by creation in pages (keyset on the tree index), those for which
        `held` holds: no cursor is held open between pages, so callers may run other
        queries while iterating."""
        sql = (
            f"SELECT {cols} FROM nodes n {_CONTENT} WHERE n.tree_id = %s AND {held}"
            " AND (n.created_at, n.id) > (%s, %s) ORDER BY n.created_at, n.id LIMIT %s"
        )
        after = ("", "")
        while True:
            batch = self.c.fetch_all(sql, (tree_id, *after, _PAGE))
            if not batch:
                return
            yield batch
            if len(batch) < _PAGE:
                return
            after = (batch[-1][-1], batch[-1][0])

    def tree_nodes(self, tree_id: str) -> Iterator[Node]:
        for batch in self._pages(_NODE_COLS + ", n.created_at", _HELD, tree_id):
            yield from self._nodes([r[:-1] for r in batch]).values()

    def tree_shape(self, tree_id: str) -> list[ShapeRow]:
        return self.c.fetch_all(
            "SELECT n.id, n.parent_id, n.slot_id, n.edited_from, n.role, n.kind,"
            f" left({_BODY_OF}, {SHAPE_HEAD}) FROM nodes n {_CONTENT}"
            " WHERE n.tree_id = %s ORDER BY n.created_at, n.id",
            (tree_id,),
        )

    def chain_rows(self, tree_id: str) -> Iterator[ChainRow]:
        cols = (
            f"n.id, n.parent_id, n.content_id, {_BODY_OF}, n.created_at, n.author, n.role,"
            " n.kind, n.edited_from, n.options, n.provenance, n.chain_hash, n.flags, n.created_at"
        )
        for batch in self._pages(cols, "TRUE", tree_id):
            sources = self.node_sources([r[0] for r in batch if r[12] & HAS_SOURCES])
            selections = self.node_selections([r[0] for r in batch if r[12] & HAS_SELECTIONS])
            for r in batch:
                yield {
                    "id": r[0], "parent": r[1], "content_id": bytes_to_hex(r[2]),
                    "body": None if r[3] is None else r[3].encode("utf-8"),
                    "created_at": r[4], "author": r[5], "role": r[6], "kind": r[7],
                    "edited_from": r[8], "options": r[9], "provenance": r[10],
                    "chain_hash": bytes_to_hex(r[11]), "sources": sources.get(r[0], []),
                    "selections": selections.get(r[0], {}),
                }

    def subtree(self, slot: str) -> list[str]:
        pin, args = "", [slot]
        if self.c.citus or self.c.split:  # stay inside one shard or partition: pin every scan
            tree = self._tree_of(slot)
            if tree is None:
                return []
            pin, args = " AND {t}.tree_id = %s", [slot, tree, tree, tree]
        rows = self.c.fetch_all(
            "WITH RECURSIVE s(slot) AS (SELECT %s::text COLLATE \"C\" UNION"
            f" SELECT n.slot_id FROM nodes n JOIN s ON n.parent_slot = s.slot{pin.format(t='n')})"
            f" SELECT n.id FROM s JOIN nodes n ON n.id = s.slot{pin.format(t='n')} UNION ALL"
            " SELECT v.id FROM s JOIN nodes v ON v.slot_id = s.slot AND v.edited_from IS NOT NULL"
            f"{pin.format(t='v')}",
            args,
        )
        return [r[0] for r in rows]
