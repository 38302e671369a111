"""The server backend: PostgreSQL through psycopg 3 and a pool of connections.

One backend object serves every thread of a process: a transaction holds one pooled
connection from its begin to its end, for its thread alone; a read outside a
transaction borrows one for that statement. Waiting longer than the pool's timeout
for a free connection raises `StoreBusy`.

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
* Connections are in autocommit mode outside `transaction()`, so a read never
  leaves a transaction open; statements are prepared server-side on first reuse and
  id lists are bound as one array parameter, so every query text is constant.
* Blobs live at the URL's `blobs=` (any fsspec URL), else $LOOMDB_BLOBS, else
  ./.loomdb-blobs (see `open_postgres`).
* Every statement goes through one of two seams: `_read` (outside a transaction: the
  router of replicas.py may send it to a hot standby that has this store's writes)
  and `_write` or the transaction's connection (the primary). A server that refuses a
  write as read-only raises `ReadOnlyStore`.
* A store split by tree (`partitions=N`, partitions.py) pins walk, children and
  subtree to the node's tree, so each prunes to one partition.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit, urlunsplit

from ..blobs import BlobStore
from ..errors import (
    InvalidInput,
    LoomError,
    MissingExtra,
    ReadOnlyStore,
    RefConflict,
    StoreBusy,
    StoreUnavailable,
)
from ..model import Anchor, Edge, Node, Ref, RefMove, now
from . import migrations, partitions
from .base import Backend, ThreadState
from .blobmeta import BlobMetaSQL
from .drafts import DraftsPostgres
from .nodes import DEPTH, HAS_SELECTIONS, HAS_SOURCES, ChainRow, PathRow
from .overlay import MetaSQL
from .provenance import ProvenanceSQL
from .refs import REF_LOG, RefSQL, refs_from_rows
from .replicas import CONNECT_TIMEOUT, ReplicaOptions, Router, parse_options
from .replicas import OPTIONS as REPLICA_OPTIONS
from .rows import build_nodes, bytes_to_hex, dumps, hex_to_bytes
from .trees import TREE_COLUMNS, TreeSQL
from .unstorable import unstorable

try:
    import psycopg
    import psycopg_pool
    from psycopg import errors as pg_errors
except ImportError:  # pragma: no cover - exercised only without the extra
    psycopg = None  # type: ignore[assignment]

T = TypeVar("T")

#: key of the advisory lock that serializes concurrent migrations of one database
_MIGRATION_LOCK = 0x6C6F6F6D  # "loom"
_PAGE = 2000

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
    f" FROM w JOIN nodes n ON n.id = w.parent_id AND n.tree_id = w.tree_id{{rpin}})"
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
#: pinned to the node's tree, in a store split by tree (partitions.py): one partition
_PIN = " AND n.tree_id = %s"
_WALK_PINNED = _WALK.format(pin=_PIN, rpin=_PIN)
_CHILDREN_PINNED = (
    "SELECT id FROM nodes WHERE parent_slot = %s AND tree_id = %s AND edited_from IS NULL"
    " ORDER BY created_at, id"
)
#: the hot reads by name, for `explain` (tests and tools check their plans)
HOT_QUERIES = {"walk": _WALK.format(pin="", rpin=""), "children": _CHILDREN, "leaves": _LEAVES,
               "walk_pinned": _WALK_PINNED, "children_pinned": _CHILDREN_PINNED,
               "ref_log_pinned": REF_LOG.replace("?", "%s")
               + " WHERE tree_id = %s AND ref_name = %s ORDER BY seq"}

_TREE_SELECT = (
    TREE_COLUMNS + " s.count, s.last FROM trees t"
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


@functools.lru_cache(maxsize=1024)
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


class _Thread(ThreadState):
    """One thread's open transaction: the pooled connection it holds, and its block;
    and whether its reads are pinned to the primary (`on_primary`)."""

    conn: Any = None
    tx: Any = None
    pinned: int = 0


def _read_only(exc: BaseException) -> bool:
    return psycopg is not None and isinstance(exc, pg_errors.ReadOnlySqlTransaction)


class PostgresBackend(TreeSQL, MetaSQL, RefSQL, ProvenanceSQL, DraftsPostgres, BlobMetaSQL,
                      Backend):
    """PostgreSQL storage; see the module docstring."""

    dialect = "postgres"

    def __init__(self, url: str, *, conninfo: str | None = None,
                 prepare_threshold: int | None = 1, pool_size: int = 8,
                 timeout: float = 60.0, replicas: ReplicaOptions | None = None,
                 partitions: int = 0) -> None:
        if psycopg is None:
            raise MissingExtra("the PostgreSQL backend", "postgres")
        self.url = url
        self.timeout = timeout
        self._local = _Thread()
        options = {"autocommit": True, "prepare_threshold": prepare_threshold}
        # connect once up front: a bad URL or a server that is down fails here, plainly
        try:
            first = psycopg.connect(conninfo or url, **options)  # type: ignore[arg-type]
        except psycopg.OperationalError as exc:
            raise unavailable(conninfo or url, exc) from None
        with first:
            # Citus cannot plan a recursive walk that is not pinned to one tree (shard)
            found = first.execute(
                "SELECT count(*) FROM pg_extension WHERE extname = 'citus'").fetchone()
        self._citus = bool(found and found[0])
        #: partitions asked for by the URL, and how many `nodes` has (set by migrate)
        self._partitions, self.split = partitions, 0
        self._pool = psycopg_pool.ConnectionPool(
            conninfo or url, kwargs=options, min_size=1, max_size=max(1, pool_size),
            timeout=timeout, num_workers=1, open=True, name=f"loomdb-{id(self):x}",
        )
        self._router = self._make_router(conninfo or url, options, replicas, pool_size)

    @staticmethod
    def _make_router(conninfo: str, options: dict[str, Any], replicas: ReplicaOptions | None,
                     pool_size: int) -> Router:
        """The read router: standbys share the primary's database, user and options."""
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        def connect(host: str, port: int) -> Any:
            return psycopg.connect(make_conninfo(conninfo, host=host, port=port,
                                                 connect_timeout=CONNECT_TIMEOUT), **options)

        # a standby that fails, drops the connection or cancels a read on a replay
        # conflict (SQLSTATE 40001) is skipped; any other error is the caller's
        skippable = (psycopg.OperationalError, pg_errors.SerializationFailure)
        parts = conninfo_to_dict(conninfo)
        primary = f"{parts.get('host') or parts.get('hostaddr') or ''}:{parts.get('port') or 5432}"
        return Router(replicas or ReplicaOptions(), connect, pool_size, skippable, primary)

    # -- plumbing --------------------------------------------------------------------
    def _borrow(self) -> Any:
        """A pooled connection for this thread; StoreBusy when none frees up in time."""
        try:
            return self._pool.getconn()
        except psycopg_pool.PoolTimeout as exc:
            raise StoreBusy("postgresql", f"no free connection within {self.timeout:g} s"
                            ) from exc

    def _on_primary(self, work: Callable[[Any], T]) -> T:
        """`work(conn)` on a pooled connection to the primary, outside any transaction."""
        conn = self._borrow()
        try:
            return work(conn)
        finally:
            self._pool.putconn(conn)

    def _read(self, work: Callable[[Any], T]) -> T:
        """The read seam: inside the thread's transaction on its connection; otherwise
        where the router says (a standby that has this store's writes, or the primary)."""
        try:
            conn = self._local.conn
            if conn is not None:
                return work(conn)
            if self._router.active and not self._local.pinned:
                return self._router.read(work, self._on_primary)
            return self._on_primary(work)
        except (UnicodeEncodeError, OverflowError, psycopg.DataError) as exc:
            raise unstorable(exc) or exc from None

    def _write(self, work: Callable[[Any], T]) -> T:
        """The write seam outside a transaction (one autocommitted statement): always
        the primary; its WAL position is recorded for read-your-writes."""
        conn = self._local.conn
        if conn is not None:
            try:
                return work(conn)
            except (UnicodeEncodeError, OverflowError, psycopg.DataError) as exc:
                raise unstorable(exc) or exc from None

        def run(conn: Any) -> T:
            try:
                out = work(conn)
            except pg_errors.ReadOnlySqlTransaction as exc:
                raise ReadOnlyStore("postgresql", str(exc).strip()) from exc
            except (UnicodeEncodeError, OverflowError, psycopg.DataError) as exc:
                raise unstorable(exc) or exc from None
            self._note_commit(conn)
            return out

        return self._on_primary(run)

    def _note_commit(self, conn: Any) -> None:
        """After a commit on `conn`: record its WAL position when standbys serve reads."""
        if self._router.active:
            self._router.note_write(
                conn.execute("SELECT pg_current_wal_insert_lsn()::text").fetchone()[0])

    @contextmanager
    def on_primary(self) -> Iterator[None]:
        """Reads of the calling thread inside the block go to the primary (a session's
        head read for an append must not come from a standby)."""
        self._local.pinned += 1
        try:
            yield
        finally:
            self._local.pinned -= 1

    @property
    def served(self) -> dict[str, int]:
        """Reads outside transactions served per server ("primary" or HOST:PORT)."""
        return dict(self._router.served)

    def _run(self, sql: str, args: Sequence[Any] | None = None) -> Any:
        return self._write(lambda conn: conn.execute(sql, args))

    def _all(self, sql: str, args: Sequence[Any] | None = None) -> list[tuple[Any, ...]]:
        return self._read(lambda conn: conn.execute(sql, args).fetchall())

    def _one(self, sql: str, args: Sequence[Any] | None = None) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = self._read(lambda conn: conn.execute(sql, args).fetchone())
        return row

    def _many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        conn = self._local.conn
        if conn is None:
            with self.transaction():
                self._many(sql, rows)
            return
        with conn.cursor() as cur:
            cur.executemany(sql, rows)

    # shared SQL: `?` placeholders, translated once per statement text
    def q_all(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._all(_qmark(sql), args)

    def q_one(self, sql: str, args: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        return self._one(_qmark(sql), args)

    def q_run(self, sql: str, args: Sequence[Any] = ()) -> int:
        return int(self._run(_qmark(sql), args).rowcount)

    def q_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self._many(_qmark(sql), rows)

    def ids_in(self, column: str, ids: Sequence[str]) -> Iterator[tuple[str, list[Any]]]:
        if ids:
            yield f"{column} = ANY(?::text[])", [list(ids)]

    def execute(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run raw SQL (tests tamper with rows, tools read plans). `?` placeholders are
        accepted as in the SQLite backend; without args the SQL is sent as written."""
        return self._write(lambda conn: self._execute_on(conn, sql, args))

    @staticmethod
    def _execute_on(conn: Any, sql: str, args: Sequence[Any]) -> list[tuple[Any, ...]]:
        cur = conn.execute(_qmark(sql), args) if args else conn.execute(sql)
        return cur.fetchall() if cur.description is not None else []

    def explain(self, query: str, args: Sequence[Any], analyze: bool = False) -> str:
        """The plan of one of HOT_QUERIES (by name) or of any SQL with %s parameters."""
        sql = HOT_QUERIES.get(query, query)
        opts = "ANALYZE, BUFFERS, " if analyze else ""
        rows = self._all(f"EXPLAIN ({opts}COSTS OFF) {sql}", args)
        return "\n".join(r[0] for r in rows)

    # -- lifecycle -------------------------------------------------------------------
    def close(self) -> None:
        """Close the pools and their connections."""
        self._router.close()
        self._pool.close()

    # psycopg's transaction block on a pooled connection, entered and left by hand
    # around the caller's work
    def _begin(self) -> None:
        conn = self._borrow()
        try:
            tx = conn.transaction()
            tx.__enter__()
        except BaseException:
            self._pool.putconn(conn)
            raise
        self._local.conn, self._local.tx = conn, tx

    def _end(self) -> tuple[Any, Any]:
        """Take the thread's connection and block off it (the transaction is over)."""
        local = self._local
        conn, tx = local.conn, local.tx
        local.conn = local.tx = None
        return conn, tx

    def _commit(self) -> None:
        conn, tx = self._end()
        try:
            tx.__exit__(None, None, None)
            self._note_commit(conn)
        except (pg_errors.DeadlockDetected, pg_errors.SerializationFailure) as exc:
            raise TransientConflict(type(exc).__name__) from exc
        except pg_errors.ReadOnlySqlTransaction as exc:
            raise ReadOnlyStore("postgresql", str(exc).strip()) from exc
        finally:
            self._pool.putconn(conn)

    def _rollback(self, exc: BaseException) -> BaseException | None:
        conn, tx = self._end()
        try:
            tx.__exit__(type(exc), exc, exc.__traceback__)
        finally:
            self._pool.putconn(conn)
        if isinstance(exc, (pg_errors.DeadlockDetected, pg_errors.SerializationFailure)):
            return TransientConflict(type(exc).__name__)
        if _read_only(exc):
            return ReadOnlyStore("postgresql", str(exc).strip())
        return unstorable(exc)

    def migrate(self) -> list[str]:
        applied = self._migrate()
        self._split()
        return applied

    def _split(self) -> None:
        """Split a new store by tree when the URL asks (partitions.py); learn whether
        the store is split either way, so hot reads pin themselves to one tree."""
        count = self._one(partitions.COUNT_SQL)
        self.split = int(count[0]) if count else 0
        if not self._partitions or self.split:
            return
        with self.transaction():
            self._run("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            if self._one(partitions.COUNT_SQL)[0]:  # type: ignore[index]
                self.split = int(self._one(partitions.COUNT_SQL)[0])  # type: ignore[index]
                return
            if self._one("SELECT EXISTS (SELECT 1 FROM nodes)")[0]:  # type: ignore[index]
                raise InvalidInput("partitions", "only a new, empty store can be split by "
                                   "tree; copy into one: loomdb migrate --to URL --partitions N")
            self._local.conn.execute(partitions.split_sql(self._partitions), prepare=False)
        self.split = self._partitions

    def _migrate(self) -> list[str]:
        if set(migrations.names("postgres")) <= set(self.applied_migrations()):
            return []
        scripts = migrations.scripts("postgres")
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
                self._local.conn.execute(sql, prepare=False)
                self._run("INSERT INTO loomdb_migrations VALUES (%s, %s)", (name, now()))
                applied.append(name)
        return applied

    def applied_migrations(self) -> list[str]:
        if self._one("SELECT to_regclass('loomdb_migrations')")[0] is None:  # type: ignore[index]
            return []
        return [r[0] for r in self._all("SELECT name FROM loomdb_migrations ORDER BY name")]

    # -- trees: their statistics in one lateral scan ------------------------------------
    TREE_STATS = _TREE_SELECT
    BLOB_BODIES = "SELECT body FROM contents WHERE body LIKE '%sha256:%'"

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

    def walk(self, node_id: str) -> list[PathRow]:
        if not (self._citus or self.split):
            rows = self._all(_WALK.format(pin="", rpin=""), (node_id,))
        else:
            tree = self._tree_of(node_id)
            if tree is None:
                return []
            if self.split:  # every step in the tree's partition
                rows = self._all(_WALK_PINNED, (node_id, tree, tree))
            else:
                rows = self._all(_WALK.format(pin=_PIN, rpin=""), (node_id, tree))
        if not all(a[DEPTH] > b[DEPTH] for a, b in zip(rows, rows[1:], strict=False)):
            rows.sort(key=lambda r: -r[DEPTH])  # depth strictly decreases from the head
        return rows

    def path_rows(self, ids: Sequence[str]) -> dict[str, PathRow]:
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
        if self.split:
            tree = self._tree_of(slot)
            rows = self._all(_CHILDREN_PINNED, (slot, tree)) if tree else []
            return [r[0] for r in rows]
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

    def chain_rows(self, tree_id: str) -> Iterator[ChainRow]:
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
        if self._citus or self.split:  # stay inside one shard or partition: pin every scan
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

    # -- refs (the head is on the refs row, locked inside a write) --------------------
    @staticmethod
    def _refs(rows: list[tuple[Any, ...]]) -> list[Ref]:
        return refs_from_rows(rows)

    def get_ref(self, name: str) -> Ref | None:
        # inside a write, lock the row: writers of this ref queue here, so the Loom's
        # read-then-CAS sees the latest head instead of losing the race at the CAS
        lock = " FOR UPDATE OF r" if self._local.depth else ""
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
            "INSERT INTO ref_log (ref_name, seq, at, old_node, new_node, actor, reason, tree_id)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, coalesce(%s,"
            " (SELECT tree_id FROM refs WHERE name = %s)))",
            (move.ref, move.seq, move.at, move.old, move.new, move.actor, move.reason,
             move.tree, move.ref),
        )
        return True



# -- opening a store by URL -----------------------------------------------------------
DEFAULT_BLOBS = ".loomdb-blobs"
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def split_url(url: str) -> tuple[str, str | None]:
    """(connection URL without loomdb's own options, the blob location it named or
    None). The other parameters are passed to libpq byte for byte (libpq does not read
    `+` as a space)."""
    conninfo, ours = split_options(url)
    return conninfo, ours.get("blobs")


def split_options(url: str) -> tuple[str, dict[str, str]]:
    """(connection URL for libpq, loomdb's options: `blobs` and the replica settings)."""
    parts = urlsplit(url)
    kept, ours = [], {}
    for item in parts.query.split("&") if parts.query else []:
        key, _, value = item.partition("=")
        if unquote(key) in ("blobs", "partitions", *REPLICA_OPTIONS):
            ours[unquote(key)] = unquote(value)
        else:
            kept.append(item)
    return urlunsplit(parts._replace(query="&".join(kept))), ours


def blob_store(location: str) -> Any:
    """A local folder (path or file:// URL) -> BlobStore; any other fsspec URL ->
    objectstore.ObjectBlobStore (extra `objectstore`)."""
    if location.startswith("file://"):
        return BlobStore(location[len("file://"):])
    if not _SCHEME.match(location):
        return BlobStore(location)
    from ..objectstore import ObjectBlobStore

    return ObjectBlobStore(location)


def unavailable(conninfo: str, exc: Exception) -> StoreUnavailable:
    """A failed first connection as one line that says what to do: the database to
    create, the server to start, or the server's own first line (credentials...)."""
    info = psycopg.conninfo.conninfo_to_dict(conninfo)
    host, port = info.get("host") or "localhost", info.get("port") or "5432"
    db = info.get("dbname") or info.get("user") or "the database"
    shown = f"postgresql://{host}:{port}/{db}"
    text = str(exc)
    if f'database "{db}" does not exist' in text:
        return StoreUnavailable(shown, f'database "{db}" does not exist',
                                f"create it with `createdb -h {host} -p {port} {db}`")
    if "Connection refused" in text or "No such file or directory" in text:
        return StoreUnavailable(shown, f"no PostgreSQL server answers on {host}:{port}",
                                "start the server or correct the host and port in the URL")
    first = text.splitlines()[0] if text else type(exc).__name__
    return StoreUnavailable(shown, first.removeprefix("connection failed: "),
                            "check the URL, the user and the server")


def open_postgres(url: str) -> tuple[PostgresBackend, Any]:
    """Open a PostgreSQL store: `postgresql://user@host/db?blobs=<fsspec URL>`.

    Blobs go to the URL's `blobs=` (stripped before connecting), else $LOOMDB_BLOBS,
    else the local folder ./.loomdb-blobs."""
    conninfo, ours = split_options(url)
    if conninfo.startswith("postgres://"):
        conninfo = "postgresql://" + conninfo[len("postgres://"):]
    replicas = parse_options(ours)
    split = partitions.parse(ours.get("partitions"))
    location = ours.get("blobs") or os.environ.get("LOOMDB_BLOBS") or DEFAULT_BLOBS
    store = blob_store(location)
    return PostgresBackend(url, conninfo=conninfo, replicas=replicas, partitions=split), store
