"""The server backend: PostgreSQL through psycopg 3, one connection per store object.

Semantics mirror `sqlite.py` row for row (same results, same order). What differs:

* Writers of one ref serialize on its row: inside a transaction `get_ref` reads the
  ref `FOR UPDATE`, so the Loom's read-then-compare-and-swap is exact under READ
  COMMITTED and a concurrent append waits for the head instead of forking or
  failing; writers of other refs never wait. The refs row keeps the head and the
  number of the log line that brought it there; `move_ref` updates it only if that
  number is still the one the writer read, so a writer that read an older line (a
  Loom appending from the head it remembers) is refused, as on SQLite.
* A transaction PostgreSQL aborts (deadlock, serialization failure) surfaces as
  `TransientConflict`, a RefConflict, which the Loom's `retry` policy retries.
* Node ids are unique in the store, but the primary keys carry tree_id (Citus can
  distribute by tree, see docs/postgres.md), so `insert_node` refuses a known id itself.
* The connection is in autocommit mode outside `transaction()`, so a read never
  leaves a transaction open; statements are prepared server-side on first reuse and
  id lists are bound as one array parameter, so every query text is constant.
* Blobs live at the URL's `blobs=` (any fsspec URL), else $LOOMDB_BLOBS, else
  ./.loomdb-blobs (see `open_postgres`).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from ..blobs import BlobStore
from ..errors import InvalidInput, LoomError, MissingExtra, RefConflict
from ..model import Anchor, Edge, Meta, Node, Ref, RefMove, Tree, now
from . import migrations
from .base import DEPTH, HAS_SELECTIONS, HAS_SOURCES, Backend
from .drafts import DraftsPostgres
from .rows import build_nodes, bytes_to_hex, dumps, hex_to_bytes, loads

try:
    import psycopg
    from psycopg import errors as pg_errors
except ImportError:  # pragma: no cover - exercised only without the extra
    psycopg = None  # type: ignore[assignment]

#: key of the advisory lock that serializes concurrent migrations of one database
_MIGRATION_LOCK = 0x6C6F6F6D  # "loom"
_PAGE = 2000
_META_FIELDS = ("bookmarked", "label", "pruned", "excluded")
_TREE_FIELDS = {"title": "title", "root": "root_id", "updated_at": "updated_at",
                "archived_at": "archived_at"}

_NODE_COLS = (
    "n.id, n.tree_id, n.parent_id, n.slot_id, n.edited_from, n.depth, n.role, n.kind, "
    "n.author, n.source, n.content_id, c.body, n.options, n.cache, n.flags, n.tokens, "
    "n.total_tokens, n.provenance, n.origin, n.created_at, n.chain_hash"
)
_PATH_COLS = "n.id, n.slot_id, n.depth, n.role, n.kind, c.body, n.options, n.cache, n.flags"
_WALK_COLS = (
    "id, tree_id, parent_id, slot_id, depth, role, kind, options, cache, flags, tokens, "
    "total_tokens"
)
_BODY = "(SELECT c.body FROM contents c WHERE c.id = n.content_id)"
# The created-from chain, head first, in one statement: each step is one probe of the
# primary key (id, tree_id) for the parent and one of contents' for its body. Bodies
# are fetched inside the recursion so the plan stays index-driven however the
# planner sizes the chain; a node whose content row is missing is left out of the
# result (the chain continues past it), as in the SQLite backend. The recursion yields
# the chain head first; `walk` checks that order instead of sorting on the server (a
# sort of 10k bodies spills past work_mem).
_WALK = (
    f"WITH RECURSIVE w({_WALK_COLS}, body) AS ("
    f" SELECT {', '.join('n.' + c.strip() for c in _WALK_COLS.split(','))}, {_BODY}"
    f" FROM nodes n WHERE n.id = %s{{pin}}"
    f" UNION ALL"
    f" SELECT {', '.join('n.' + c.strip() for c in _WALK_COLS.split(','))}, {_BODY}"
    f" FROM w JOIN nodes n ON n.id = w.parent_id AND n.tree_id = w.tree_id)"
    f" SELECT id, slot_id, depth, role, kind, body, options, cache, flags"
    f" FROM w WHERE body IS NOT NULL"
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
#: the hot reads by name, for `explain` (tests and tools check their plans)
HOT_QUERIES = {"walk": _WALK.format(pin=""), "children": _CHILDREN, "leaves": _LEAVES}

_TREE_COLUMNS = (
    "SELECT t.id, t.title, t.mode, t.system, t.options, t.root_id, t.lineage, t.created_at,"
    " t.updated_at, t.archived_at,"
)
_TREE_SELECT = (
    _TREE_COLUMNS + " s.count, s.last FROM trees t"
    " LEFT JOIN LATERAL (SELECT count(*) AS count, max(n.created_at) AS last FROM nodes n"
    " WHERE n.tree_id = t.id) s ON true "
)
_REF_SELECT = (
    "SELECT r.name, r.kind, r.tree_id, r.node_id, r.origin, r.created_at, r.updated_at,"
    " r.seq,"
    " s.slot_id, s.version_id FROM refs r LEFT JOIN ref_selections s ON s.ref_name = r.name "
)


class TransientConflict(RefConflict):
    """PostgreSQL aborted the transaction (deadlock or serialization failure): nothing
    was written and running it again may succeed. A RefConflict, so the Loom's `retry`
    policy retries it and `fail` reports it as the conflict it is."""

    def __init__(self, why: str) -> None:
        self.ref, self.expected, self.actual = "", None, None
        LoomError.__init__(self, f"the database aborted the transaction ({why}); retry it")


def _qmark(sql: str) -> str:
    """SQLite-style `?` placeholders (outside quotes) -> psycopg's `%s`, `%` escaped."""
    out, quote = [], ""
    for ch in sql:
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "?":
            out.append("%s")
            continue
        out.append("%%" if ch == "%" else ch)
    return "".join(out)


class PostgresBackend(DraftsPostgres, Backend):
    """PostgreSQL storage; see the module docstring."""

    dialect = "postgres"

    def __init__(self, url: str, *, conninfo: str | None = None,
                 prepare_threshold: int | None = 1) -> None:
        if psycopg is None:
            raise MissingExtra("the PostgreSQL backend", "postgres")
        self.url = url
        self._conn = psycopg.connect(
            conninfo or url, autocommit=True, prepare_threshold=prepare_threshold
        )
        self._lock = threading.RLock()
        self._depth = 0
        # Citus cannot plan a recursive walk that is not pinned to one tree (shard)
        found = self._one("SELECT count(*) FROM pg_extension WHERE extname = 'citus'")
        self._citus = bool(found and found[0])

    # -- plumbing --------------------------------------------------------------------
    def _run(self, sql: str, args: Sequence[Any] | None = None) -> Any:
        return self._conn.execute(sql, args)

    def _all(self, sql: str, args: Sequence[Any] | None = None) -> list[tuple[Any, ...]]:
        return self._conn.execute(sql, args).fetchall()

    def _one(self, sql: str, args: Sequence[Any] | None = None) -> tuple[Any, ...] | None:
        return self._conn.execute(sql, args).fetchone()

    def _many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with self._conn.cursor() as cur:
            cur.executemany(sql, rows)

    def execute(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run raw SQL (tests tamper with rows, tools read plans). `?` placeholders are
        accepted as in the SQLite backend; without args the SQL is sent as written."""
        cur = self._conn.execute(_qmark(sql), args) if args else self._conn.execute(sql)
        return cur.fetchall() if cur.description is not None else []

    def explain(self, query: str, args: Sequence[Any], analyze: bool = False) -> str:
        """The plan of one of HOT_QUERIES (by name) or of any SQL with %s parameters."""
        sql = HOT_QUERIES.get(query, query)
        opts = "ANALYZE, BUFFERS, " if analyze else ""
        rows = self._all(f"EXPLAIN ({opts}COSTS OFF) {sql}", args)
        return "\n".join(r[0] for r in rows)

    # -- lifecycle -------------------------------------------------------------------
    def close(self) -> None:
        self._conn.close()

    # psycopg's transaction block, entered and left by hand around the caller's work
    def _begin(self) -> None:
        self._tx = self._conn.transaction()
        self._tx.__enter__()

    def _commit(self) -> None:
        try:
            self._tx.__exit__(None, None, None)
        except (pg_errors.DeadlockDetected, pg_errors.SerializationFailure) as exc:
            raise TransientConflict(type(exc).__name__) from exc

    def _rollback(self, exc: BaseException) -> BaseException | None:
        self._tx.__exit__(type(exc), exc, exc.__traceback__)
        if isinstance(exc, (pg_errors.DeadlockDetected, pg_errors.SerializationFailure)):
            return TransientConflict(type(exc).__name__)
        return None

    def migrate(self) -> list[str]:
        scripts = migrations.scripts("postgres")
        if {name for name, _ in scripts} <= set(self.applied_migrations()):
            return []
        applied: list[str] = []
        with self.transaction():
            # concurrent first opens (one per process) apply each script exactly once
            self._run("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            self._run(
                'CREATE TABLE IF NOT EXISTS loomdb_migrations (name text COLLATE "C" '
                "PRIMARY KEY, applied_at text NOT NULL)"
            )
            done = set(self.applied_migrations())
            for name, sql in scripts:
                if name in done:
                    continue
                # one round trip per script (simple query protocol: several statements)
                self._conn.execute(sql, prepare=False)
                self._run("INSERT INTO loomdb_migrations VALUES (%s, %s)", (name, now()))
                applied.append(name)
        return applied

    def applied_migrations(self) -> list[str]:
        if self._one("SELECT to_regclass('loomdb_migrations')")[0] is None:  # type: ignore[index]
            return []
        return [r[0] for r in self._all("SELECT name FROM loomdb_migrations ORDER BY name")]

    # -- trees -----------------------------------------------------------------------
    def insert_tree(self, tree: Tree) -> None:
        self._run(
            "INSERT INTO trees VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
            (tree.id, tree.title, tree.mode, tree.system, dumps(tree.options or None),
             tree.root, dumps(tree.lineage), tree.created_at, tree.updated_at, tree.archived_at),
        )

    @staticmethod
    def _tree(row: tuple[Any, ...]) -> Tree:
        tid, title, mode, system, options, root, lineage, created, updated, archived = row[:10]
        count, last = row[10], row[11]
        return Tree(
            id=tid, title=title, mode=mode, system=system, options=loads(options) or {},
            root=root, lineage=loads(lineage), created_at=created,
            updated_at=max(updated, last or ""), archived_at=archived, nodes=count or 0,
        )

    def get_tree(self, tree_id: str, *, stats: bool = True) -> Tree | None:
        select = _TREE_SELECT if stats else _TREE_COLUMNS + " NULL, NULL FROM trees t "
        row = self._one(select + "WHERE t.id = %s", (tree_id,))
        return None if row is None else self._tree(row)

    def list_trees(self, archived: bool = False) -> list[Tree]:
        cond = "t.archived_at IS NOT NULL" if archived else "t.archived_at IS NULL"
        rows = self._all(_TREE_SELECT + f"WHERE {cond} ORDER BY t.created_at DESC, t.id")
        return [self._tree(r) for r in rows]

    def update_tree(self, tree_id: str, fields: dict[str, Any]) -> None:
        sets = ", ".join(f"{_TREE_FIELDS[k]} = %s" for k in fields)
        self._run(f"UPDATE trees SET {sets} WHERE id = %s", (*fields.values(), tree_id))

    def tree_ids_with_prefix(self, prefix: str, limit: int) -> list[str]:
        rows = self._all(
            "SELECT id FROM trees WHERE id >= %s AND id < %s ORDER BY id LIMIT %s",
            (prefix, prefix + "\uffff", limit),
        )
        return [r[0] for r in rows]

    # -- content ---------------------------------------------------------------------
    def get_content(self, content_id: str) -> bytes | None:
        row = self._one("SELECT body FROM contents WHERE id = %s", (hex_to_bytes(content_id),))
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
        if self._citus:  # Citus plans no subquery inside an INSERT: read the slot first
            self._run(_PUT_CONTENT, content)
            row = self._one("SELECT slot_id FROM nodes WHERE id = %s AND tree_id = %s",
                            (node.parent, node.tree)) if node.parent else None
            values = (*values[:4], row[0] if row else None, *values[6:])
            sql = f"INSERT INTO nodes VALUES ({', '.join(['%s'] * len(values))})"
        else:
            # the content goes in the same statement (one round trip per node)
            sql = (f"WITH c AS ({_PUT_CONTENT}) INSERT INTO nodes {select}"
                   " WHERE NOT EXISTS (SELECT 1 FROM nodes WHERE id = %s)")
            values = (*content, *values, node.id)
        if not self._run(sql, values).rowcount:
            raise InvalidInput(f"node {node.id}", "a node with this id is already in the store")
        if node.sources:
            self._many(
                "INSERT INTO node_sources VALUES (%s,%s,%s,%s,%s)",
                [(node.id, node.tree, i, src, role) for i, (src, role) in enumerate(node.sources)],
            )
        if node.selections:
            self._many(
                "INSERT INTO node_selections VALUES (%s,%s,%s,%s)",
                [(node.id, node.tree, slot, ver) for slot, ver in node.selections.items()],
            )

    def anchor(self, node_id: str) -> Anchor | None:
        row = self._one(
            "SELECT id, tree_id, slot_id, depth, total_tokens, chain_hash FROM nodes WHERE id = %s",
            (node_id,),
        )
        return None if row is None else Anchor(
            row[0], row[1], row[2], row[3], row[4], bytes_to_hex(row[5]))

    def get_nodes(self, ids: Sequence[str]) -> dict[str, Node]:
        if not ids:
            return {}
        rows = self._all(
            f"SELECT {_NODE_COLS} FROM nodes n JOIN contents c ON c.id = n.content_id"
            " WHERE n.id = ANY(%s::text[])",
            (list(ids),),
        )
        return self._nodes(rows)

    def _nodes(self, rows: list[tuple[Any, ...]]) -> dict[str, Node]:
        return build_nodes(self, rows)

    def node_ids_with_prefix(self, prefix: str, limit: int) -> list[str]:
        rows = self._all(
            "SELECT id FROM nodes WHERE id >= %s AND id < %s ORDER BY id LIMIT %s",
            (prefix, prefix + "\uffff", limit),
        )
        return [r[0] for r in rows]

    def _tree_of(self, node_id: str) -> str | None:
        row = self._one("SELECT tree_id FROM nodes WHERE id = %s", (node_id,))
        return None if row is None else row[0]

    def walk(self, node_id: str) -> list[tuple[Any, ...]]:
        if not self._citus:
            rows = self._all(_WALK.format(pin=""), (node_id,))
        else:
            tree = self._tree_of(node_id)
            if tree is None:
                return []
            rows = self._all(_WALK.format(pin=" AND n.tree_id = %s"), (node_id, tree))
        if not all(a[DEPTH] > b[DEPTH] for a, b in zip(rows, rows[1:], strict=False)):
            rows.sort(key=lambda r: -r[DEPTH])  # depth strictly decreases from the head
        return rows

    def path_rows(self, ids: Sequence[str]) -> dict[str, tuple[Any, ...]]:
        if not ids:
            return {}
        rows = self._all(
            f"SELECT {_PATH_COLS} FROM nodes n JOIN contents c ON c.id = n.content_id"
            " WHERE n.id = ANY(%s::text[])",
            (list(ids),),
        )
        return {r[0]: r for r in rows}

    def node_selections(self, ids: Sequence[str]) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        if not ids:
            return out
        for node, slot, version in self._all(
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
        for node, source, role in self._all(
            "SELECT node_id, source_id, role FROM node_sources"
            " WHERE node_id = ANY(%s::text[]) ORDER BY node_id, position",
            (list(ids),),
        ):
            out.setdefault(node, []).append((source, role))
        return out

    def children(self, slot: str) -> list[str]:
        rows = self._all(_CHILDREN, (slot,))
        return [r[0] for r in rows]

    def versions(self, slot: str) -> list[str]:
        rows = self._all(
            "SELECT id FROM (SELECT id, 0 AS k, '' AS at FROM nodes WHERE id = %s"
            " UNION ALL SELECT id, 1, created_at FROM nodes"
            " WHERE slot_id = %s AND edited_from IS NOT NULL) v ORDER BY k, at, id",
            (slot, slot),
        )
        return [r[0] for r in rows]

    def leaves(self, tree_id: str) -> list[str]:
        rows = self._all(_LEAVES, (tree_id,))
        return [r[0] for r in rows]

    def branch_points(self, tree_id: str) -> list[str]:
        rows = self._all(
            "SELECT p.id FROM nodes p JOIN (SELECT parent_slot FROM nodes"
            " WHERE tree_id = %s AND parent_slot IS NOT NULL AND edited_from IS NULL"
            " GROUP BY parent_slot HAVING count(*) >= 2) b ON p.id = b.parent_slot"
            " WHERE p.tree_id = %s AND p.edited_from IS NULL ORDER BY p.created_at, p.id",
            (tree_id, tree_id),
        )
        return [r[0] for r in rows]

    def _pages(self, cols: str, join: str, tree_id: str) -> Iterator[list[tuple[Any, ...]]]:
        """A tree's nodes by creation in pages (keyset on the tree index): no cursor is
        held open between pages, so callers may run other queries while iterating."""
        sql = (
            f"SELECT {cols} FROM nodes n {join} c ON c.id = n.content_id WHERE n.tree_id = %s"
            " AND (n.created_at, n.id) > (%s, %s) ORDER BY n.created_at, n.id LIMIT %s"
        )
        after = ("", "")
        while True:
            batch = self._all(sql, (tree_id, *after, _PAGE))
            if not batch:
                return
            yield batch
            if len(batch) < _PAGE:
                return
            after = (batch[-1][-1], batch[-1][0])

    def tree_nodes(self, tree_id: str) -> Iterator[Node]:
        for batch in self._pages(_NODE_COLS + ", n.created_at", "JOIN contents", tree_id):
            yield from self._nodes([r[:-1] for r in batch]).values()

    def chain_rows(self, tree_id: str) -> Iterator[dict[str, Any]]:
        cols = (
            "n.id, n.parent_id, n.content_id, c.body, n.created_at, n.author, n.role,"
            " n.kind, n.edited_from, n.options, n.provenance, n.chain_hash, n.flags, n.created_at"
        )
        for batch in self._pages(cols, "LEFT JOIN contents", tree_id):
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
        if self._citus:  # a recursive query must stay inside one shard: pin every scan
            tree = self._tree_of(slot)
            if tree is None:
                return []
            pin, args = " AND {t}.tree_id = %s", [slot, tree, tree, tree]
        rows = self._all(
            "WITH RECURSIVE s(slot) AS (SELECT %s::text COLLATE \"C\" UNION"
            f" SELECT n.slot_id FROM nodes n JOIN s ON n.parent_slot = s.slot{pin.format(t='n')})"
            f" SELECT n.id FROM s JOIN nodes n ON n.id = s.slot{pin.format(t='n')} UNION ALL"
            " SELECT v.id FROM s JOIN nodes v ON v.slot_id = s.slot AND v.edited_from IS NOT NULL"
            f"{pin.format(t='v')}",
            args,
        )
        return [r[0] for r in rows]

    # -- edges -----------------------------------------------------------------------
    def insert_edge(self, edge: Edge) -> None:
        self._run(
            "INSERT INTO edges VALUES (%s,%s,%s,%s,%s)",
            (edge.id, edge.tree, edge.type, edge.target, edge.created_at),
        )
        self._many(
            "INSERT INTO edge_sources VALUES (%s,%s,%s,%s,%s)",
            [(edge.id, edge.tree, i, src, role) for i, (src, role) in enumerate(edge.sources)],
        )

    def edges_of(self, node_id: str) -> list[Edge]:
        rows = self._all(
            "SELECT e.id, e.tree_id, e.type, e.target_id, e.created_at, s.source_id, s.role"
            " FROM edges e LEFT JOIN edge_sources s ON s.edge_id = e.id AND s.tree_id = e.tree_id"
            " WHERE e.id IN (SELECT id FROM edges WHERE target_id = %s"
            " UNION SELECT edge_id FROM edge_sources WHERE source_id = %s)"
            " ORDER BY e.id, s.position",
            (node_id, node_id),
        )
        out: list[Edge] = []
        for eid, tree, etype, target, created, source, role in rows:
            if not out or out[-1].id != eid:
                out.append(Edge(eid, tree, etype, (), target, created))
            if source is not None:
                last = out[-1]
                out[-1] = Edge(eid, tree, etype, (*last.sources, (source, role)), target, created)
        return out

    # -- metadata overlay ------------------------------------------------------------
    def get_meta(self, ids: Sequence[str]) -> dict[str, Meta]:
        if not ids:
            return {}
        arg = (list(ids),)
        base = {
            nid: [bool(bm), label, bool(pruned), bool(excluded)]
            for nid, bm, label, pruned, excluded in self._all(
                "SELECT node_id, bookmarked, label, pruned, excluded FROM node_meta"
                " WHERE node_id = ANY(%s::text[])",
                arg,
            )
        }
        tags: dict[str, list[str]] = {}
        for nid, tag in self._all(
            "SELECT node_id, tag FROM node_tags WHERE node_id = ANY(%s::text[]) ORDER BY tag", arg
        ):
            tags.setdefault(nid, []).append(tag)
        out: dict[str, Meta] = {}
        for nid in set(base) | set(tags):
            bm, label, pruned, excluded = base.get(nid, [False, None, False, False])
            out[nid] = Meta(bm, label, pruned, excluded, tuple(tags.get(nid, ())))
        return out

    def set_meta(self, node_id: str, tree_id: str, fields: dict[str, Any]) -> None:
        bad = [k for k in fields if k not in _META_FIELDS]
        if bad:
            raise InvalidInput("metadata", f"unknown field {bad[0]!r}")
        cols = ", ".join(fields)
        marks = ", ".join(["%s"] * len(fields))
        updates = ", ".join(f"{k} = EXCLUDED.{k}" for k in fields)
        self._run(
            f"INSERT INTO node_meta (node_id, tree_id, {cols}) VALUES (%s, %s, {marks})"
            f" ON CONFLICT (node_id, tree_id) DO UPDATE SET {updates}",
            (node_id, tree_id, *fields.values()),
        )

    def add_tags(self, node_id: str, tree_id: str, tags: Sequence[str]) -> None:
        self._many(
            "INSERT INTO node_tags VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
            [(node_id, tree_id, t) for t in tags],
        )

    def remove_tags(self, node_id: str, tags: Sequence[str]) -> None:
        self._run(
            "DELETE FROM node_tags WHERE node_id = %s AND tag = ANY(%s::text[])",
            (node_id, list(tags)),
        )

    def flagged(self, tree_id: str, flag: str) -> set[str]:
        assert flag in ("excluded", "pruned")
        rows = self._all(f"SELECT node_id FROM node_meta WHERE tree_id = %s AND {flag} = 1",
                         (tree_id,))
        return {r[0] for r in rows}

    # -- refs ------------------------------------------------------------------------
    @staticmethod
    def _refs(rows: list[tuple[Any, ...]]) -> list[Ref]:
        out: list[Ref] = []
        for name, kind, tree, node, origin, created, updated, seq, slot, version in rows:
            if not out or out[-1].name != name:
                out.append(Ref(
                    name, kind, tree, node, created, updated, {}, loads(origin), seq or 0
                ))
            if slot is not None:
                out[-1].selections[slot] = version
        return out

    def get_ref(self, name: str) -> Ref | None:
        # inside a write, lock the row: writers of this ref queue here, so the Loom's
        # read-then-CAS sees the latest head instead of losing the race at the CAS
        lock = " FOR UPDATE OF r" if self._depth else ""
        found = self._refs(self._all(_REF_SELECT + f"WHERE r.name = %s{lock}", (name,)))
        return found[0] if found else None

    def list_refs(self, kind: str | None = None, tree_id: str | None = None) -> list[Ref]:
        conds, args = [], []
        if kind:
            conds.append("r.kind = %s")
            args.append(kind)
        if tree_id:
            conds.append("r.tree_id = %s")
            args.append(tree_id)
        where = ("WHERE " + " AND ".join(conds)) if conds else ""
        return self._refs(self._all(_REF_SELECT + f"{where} ORDER BY r.name, s.slot_id", args))

    def ref_names_like(self, name: str, limit: int) -> list[str]:
        rows = self._all(
            "SELECT name FROM refs WHERE name >= %s AND name < %s ORDER BY name LIMIT %s",
            (name[:2], name[:2] + "\uffff", limit),
        )
        return [r[0] for r in rows]

    def insert_ref(self, ref: Ref, move: RefMove | None) -> bool:
        cur = self._run(
            "INSERT INTO refs (name, kind, tree_id, node_id, origin, created_at, updated_at)"
            " VALUES (%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (name) DO NOTHING",
            (ref.name, ref.kind, ref.tree, ref.node, dumps(ref.origin), ref.created_at,
             ref.updated_at),
        )
        if cur.rowcount and ref.selections:
            self._many(
                "INSERT INTO ref_selections VALUES (%s,%s,%s)",
                [(ref.name, s, v) for s, v in ref.selections.items()],
            )
        if not cur.rowcount:
            return False
        if move is not None:
            self.log_move(move)
        self._run("UPDATE refs SET seq = coalesce((SELECT max(seq) FROM ref_log"
                  " WHERE ref_name = %s), 0) WHERE name = %s", (ref.name, ref.name))
        return True

    def move_ref(self, move: RefMove) -> bool:
        # the refs row first (it records the line that brought the ref to its head):
        # every writer of a ref locks that row before its log, so none can wait on a
        # log line while holding the row another one needs
        cur = self._run(
            "UPDATE refs SET node_id = coalesce(%s, node_id), updated_at = %s, seq = %s"
            " WHERE name = %s AND seq = %s",
            (move.new, move.at, move.seq, move.ref, move.seq - 1),
        )
        if not cur.rowcount:
            return False
        self._run(
            "INSERT INTO ref_log (ref_name, seq, at, old_node, new_node, actor, reason)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (move.ref, move.seq, move.at, move.old, move.new, move.actor, move.reason),
        )
        return True

    def delete_ref(self, name: str) -> None:
        self._run("DELETE FROM drafts WHERE ref_name = %s", (name,))
        self._run("DELETE FROM ref_selections WHERE ref_name = %s", (name,))
        self._run("DELETE FROM refs WHERE name = %s", (name,))

    def set_selection(self, name: str, slot: str, version: str | None) -> None:
        if version is None:
            self._run(
                "DELETE FROM ref_selections WHERE ref_name = %s AND slot_id = %s", (name, slot)
            )
        else:
            self._run(
                "INSERT INTO ref_selections VALUES (%s,%s,%s) ON CONFLICT (ref_name, slot_id)"
                " DO UPDATE SET version_id = EXCLUDED.version_id",
                (name, slot, version),
            )

    def log_move(self, move: RefMove) -> None:
        # seq counts per ref, as on SQLite; writers of one ref are serialized by the
        # row lock their compare-and-swap on `refs` holds until commit
        self._run(
            "INSERT INTO ref_log (ref_name, seq, at, old_node, new_node, actor, reason)"
            " VALUES (%s, coalesce((SELECT max(seq) FROM ref_log WHERE ref_name = %s), 0) + 1,"
            " %s, %s, %s, %s, %s)",
            (move.ref, move.ref, move.at, move.old, move.new, move.actor, move.reason),
        )

    def ref_log(self, name: str) -> list[RefMove]:
        rows = self._all(
            "SELECT seq, ref_name, at, old_node, new_node, actor, reason FROM ref_log"
            " WHERE ref_name = %s ORDER BY seq",
            (name,),
        )
        return [RefMove(*r) for r in rows]

    # -- provenance ------------------------------------------------------------------
    _GEN = ("id", "tree_id", "created_at", "provider", "model", "request", "provider_request",
            "raw_response", "response_hash", "usage", "latency_ms", "status")
    _COMPACTION = ("node_id", "tree_id", "model", "tokens_before", "tokens_after",
                   "duration_ms", "trigger", "summarized", "created_at")

    def insert_generation(self, gen: dict[str, Any]) -> None:
        values = [gen[k] for k in self._GEN]
        values[8] = hex_to_bytes(gen["response_hash"])
        self._run(
            f"INSERT INTO generations ({', '.join(self._GEN)})"
            f" VALUES ({', '.join(['%s'] * len(values))})",
            values,
        )

    def get_generation(self, gen_id: str) -> dict[str, Any] | None:
        row = self._one(f"SELECT {', '.join(self._GEN)} FROM generations WHERE id = %s", (gen_id,))
        if row is None:
            return None
        out = dict(zip(self._GEN, row, strict=True))
        out["response_hash"] = bytes_to_hex(out["response_hash"])
        return out

    def insert_compaction(self, row: dict[str, Any]) -> None:
        values = [row[k] for k in self._COMPACTION]
        self._run(
            f"INSERT INTO compactions ({', '.join(self._COMPACTION)})"
            f" VALUES ({', '.join(['%s'] * len(values))})",
            values,
        )

    def get_compaction(self, node_id: str) -> dict[str, Any] | None:
        row = self._one(
            f"SELECT {', '.join(self._COMPACTION)} FROM compactions WHERE node_id = %s",
            (node_id,),
        )
        return None if row is None else dict(zip(self._COMPACTION, row, strict=True))

    # -- blobs -----------------------------------------------------------------------
    def put_blob_meta(self, blob_id: str, size: int, mime_type: str, at: str) -> None:
        self._run(
            "INSERT INTO blobs VALUES (%s,%s,%s,%s) ON CONFLICT DO NOTHING",
            (hex_to_bytes(blob_id), size, mime_type, at),
        )

    def get_blob_meta(self, blob_id: str) -> tuple[int, str] | None:
        row = self._one(
            "SELECT size, mime_type FROM blobs WHERE id = %s", (hex_to_bytes(blob_id),)
        )
        return None if row is None else (row[0], row[1])

    def list_blob_meta(self) -> list[tuple[str, int, str]]:
        rows = self._all("SELECT id, size, created_at FROM blobs ORDER BY created_at")
        return [(bytes_to_hex(bytes(r[0])), r[1], r[2]) for r in rows]

    def delete_blob_meta(self, blob_id: str, before: str) -> bool:
        return self._one("DELETE FROM blobs WHERE id = %s AND created_at < %s RETURNING id",
                         (hex_to_bytes(blob_id), before)) is not None


# -- opening a store by URL -----------------------------------------------------------
DEFAULT_BLOBS = ".loomdb-blobs"
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def split_url(url: str) -> tuple[str, str | None]:
    """(connection URL without `blobs=`, the blob location it named or None). The other
    parameters are passed to libpq byte for byte (libpq does not read `+` as a space)."""
    parts = urlsplit(url)
    kept, blobs = [], None
    for item in parts.query.split("&") if parts.query else []:
        key, _, value = item.partition("=")
        if unquote(key) == "blobs":
            blobs = unquote(value)
        else:
            kept.append(item)
    return urlunsplit(parts._replace(query="&".join(kept))), blobs


def blob_store(location: str) -> Any:
    """A local folder (path or file:// URL) -> BlobStore; any other fsspec URL ->
    objectstore.ObjectBlobStore (extra `objectstore`)."""
    if location.startswith("file://"):
        return BlobStore(location[len("file://"):])
    if not _SCHEME.match(location):
        return BlobStore(location)
    from ..objectstore import ObjectBlobStore

    return ObjectBlobStore(location)


def open_postgres(url: str) -> tuple[PostgresBackend, Any]:
    """Open a PostgreSQL store: `postgresql://user@host/db?blobs=<fsspec URL>`.

    Blobs go to the URL's `blobs=` (stripped before connecting), else $LOOMDB_BLOBS,
    else the local folder ./.loomdb-blobs."""
    conninfo, blobs = split_url(url)
    if conninfo.startswith("postgres://"):
        conninfo = "postgresql://" + conninfo[len("postgres://"):]
    location = blobs or os.environ.get("LOOMDB_BLOBS") or DEFAULT_BLOBS
    store = blob_store(location)
    return PostgresBackend(url, conninfo=conninfo), store
