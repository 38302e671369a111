"""The embedded backend: one SQLite file in WAL mode, one connection per thread.

Writers serialize on `BEGIN IMMEDIATE` (threads of one process first queue on a lock,
so they do not poll the file lock), so every compare-and-swap inside a transaction is
exact; another process waits (busy timeout) instead of failing, and a write that waits
longer than that is `StoreBusy`, never sqlite3's "database is locked" (reads never wait
on writers in WAL mode). Each thread opens its own connection on first use: a reader
never sees another thread's uncommitted rows.

The layout is shaped by what an append costs: each b-tree page it dirties is a frame
written to the WAL at commit. Nodes live in a rowid table keyed by
`segment << POS_BITS | position`, where a segment is a run of nodes each created from
the one before it: a thread grows at the right edge of its segment, its path is a few
rowid range scans, and only a node that starts a segment (a branch, a version, a root)
enters an index by parent (`nodes_starts`, which also lists a tree's segments). Content is stored inline in the first node that used it and
referenced by key from the others (one unique index on the content id keeps it stored
once). A ref's head is the last line of its log, so a move is one insert whose primary
key (ref, seq) is the compare-and-swap. Hashes are stored as raw 32-byte digests. See
migration 0004 and docs/architecture.md.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, NotFound, StoreBusy, StoreUnavailable
from ..model import Anchor, Edge, Node, Ref, RefMove, now
from . import extensions, migrations
from .base import Backend, ThreadState
from .blobmeta import BlobMetaSQL
from .drafts import DraftSQL
from .nodes import HAS_SELECTIONS, HAS_SOURCES, ChainRow, PathRow
from .overlay import MetaSQL
from .provenance import ProvenanceSQL
from .refs import RefSQL, refs_from_rows
from .rows import build_nodes, bytes_to_hex, dumps, gc_paused, hex_to_bytes
from .trees import TREE_COLUMNS, TreeSQL
from .unstorable import CheckedConnection

_CHUNK = 900  # stay under SQLite's bound-parameter limit
#: durability levels a store URL may ask for (`?synchronous=full`), see docs/durability.md:
#: `normal` (default) can lose the last commits on power loss, never corrupts; `full`
#: syncs the WAL at every commit
SYNCHRONOUS = ("normal", "full")
#: bytes of WAL kept on disk after a checkpoint (the autocheckpoint lets it grow to
#: ~40 MB between checkpoints, for append speed; this truncates it back)
WAL_LIMIT = 4 * 1024 * 1024
#: a node's key is its segment number shifted left by POS_BITS, plus its position
POS_BITS = 20
POS_MASK = (1 << POS_BITS) - 1
_NODE_COLS = (
    "n.id, n.tree_id, n.parent_id, n.slot_id, n.edited_from, n.depth, n.role, n.kind, "
    "n.author, n.source, n.content_id, coalesce(n.body, b.body), n.options, n.cache, "
    "n.flags, n.tokens, n.total_tokens, n.provenance, n.origin, n.created_at, n.chain_hash"
)
_WALK_COLS = (
    "n.id, n.slot_id, n.depth, n.role, n.kind, coalesce(n.body, b.body), n.options, n.cache,"
    " n.flags"
)
#: a node with its content, wherever the content is stored
_NODE_FROM = "nodes n LEFT JOIN nodes b ON b.key = n.body_key"
#: the first node of a segment (the condition of the `nodes_starts` index)
_STARTS = "(parent_key IS NOT NULL OR parent_id IS NULL)"


def _tree_rows(tree: str = "?") -> str:
    """FROM clause of the nodes `n` of a tree: the key ranges of its segments, in key
    order (so the ranges are read in the file's order)."""
    return (
        f"(SELECT key FROM nodes WHERE tree_id = {tree} AND {_STARTS} ORDER BY key) g"
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
#: a ref with its head (the last line of its log) and its selections
_REF_SELECT = (
    "SELECT r.name, r.kind, r.tree_id, l.new_node, r.origin, r.created_at, l.at, l.seq,"
    " s.slot_id, s.version_id FROM refs r JOIN ref_log l ON l.ref_name = r.name"
    " AND l.seq = (SELECT max(seq) FROM ref_log x WHERE x.ref_name = r.name)"
    " LEFT JOIN ref_selections s ON s.ref_name = r.name "
)






def _raw(body: str | bytes | None) -> bytes | None:
    """Stored body bytes exactly as found (a tampered row may hold anything)."""
    if body is None or isinstance(body, bytes):
        return body
    return body.encode("utf-8", "surrogatepass")


def _chunks(ids: Sequence[str]) -> Iterator[Sequence[str]]:
    for i in range(0, len(ids), _CHUNK):
        yield ids[i : i + _CHUNK]


def _marks(n: int) -> str:
    return ",".join("?" * n)


#: what a node's children need to know of it: (key, slot, whether a child follows it)
Place = tuple[int, str, bool]
_BUSY = ("database is locked", "database table is locked", "database is busy")


def _busy(exc: sqlite3.OperationalError) -> bool:
    return str(exc).startswith(_BUSY)


class _Thread(ThreadState):
    """One thread's connection, and the places its open transaction handed out (kept
    apart until commit: a rolled-back node never existed for anyone)."""

    db: sqlite3.Connection | None = None
    pending: dict[str, Place] | None = None
    #: extensions loaded on `db`
    extensions: frozenset[str] = frozenset()


class SQLiteBackend(TreeSQL, MetaSQL, RefSQL, ProvenanceSQL, DraftSQL, BlobMetaSQL, Backend):
    """SQLite file storage; see the module docstring."""

    dialect = "sqlite"

    def __init__(
        self, path: str | Path, *, timeout: float = 60.0, synchronous: str = "normal",
    ) -> None:
        if synchronous not in SYNCHRONOUS:
            raise InvalidInput("synchronous", f"{synchronous!r} is not one of {', '.join(SYNCHRONOUS)}")
        self.path = Path(path)
        self.synchronous = synchronous
        self.url = f"sqlite:///{self.path}"
        self.timeout = timeout
        self._local = _Thread()
        #: every thread's connection, to close them all
        self._connections: list[sqlite3.Connection] = []
        self._closed = False
        #: writers of this process queue here before BEGIN IMMEDIATE
        self._writer = threading.Lock()
        #: longest run of nodes in one segment (tests lower it to reach the boundary)
        self.segment_length = POS_MASK + 1
        #: places of committed nodes written or read lately (a node's place never
        #: changes); a transaction's own go to its thread's `pending` until it commits
        self._places: dict[str, Place] = {}
        self._places_lock = threading.Lock()
        #: extensions some area asked for: loaded on every connection opened after
        self._extensions: dict[str, extensions.Extension] = {}
        try:
            self._refuse_foreign()
            self._connect()  # the first connection sets WAL mode on the file, once
        except sqlite3.DatabaseError as exc:
            raise self._unavailable(exc) from None

    def _unavailable(self, exc: sqlite3.DatabaseError) -> StoreUnavailable:
        """Why the file cannot be opened, as one line that says what to do."""
        where = str(self.path)
        if isinstance(exc, sqlite3.OperationalError) and "unable to open" in str(exc):
            if self.path.exists() and not os.access(self.path, os.R_OK | os.W_OK):
                return StoreUnavailable(where, "permission denied",
                                        "give loomdb read and write access to the file")
            return StoreUnavailable(where, "the file cannot be created or opened",
                                    "check that its folder exists and is writable")
        if "not a database" in str(exc) or "malformed" in str(exc):
            return StoreUnavailable(where, "the file is not a SQLite database",
                                    "give a loomdb store folder or its sqlite:/// file")
        return StoreUnavailable(where, str(exc), "check the file")

    @property
    def _db(self) -> sqlite3.Connection:
        """The calling thread's connection, opened on its first use."""
        db = self._local.db
        return db if db is not None else self._connect()

    def _connect(self) -> sqlite3.Connection:
        if self._closed:
            raise InvalidInput("store", f"{self.url} is closed")
        # never shared: check_same_thread is off only so that close() can close it
        db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False,
                             timeout=self.timeout, factory=CheckedConnection)
        for pragma in (
            "journal_mode=WAL",
            f"synchronous={self.synchronous.upper()}",
            f"busy_timeout={int(self.timeout * 1000)}",
            "cache_size=-65536",
            "wal_autocheckpoint=10000",
            f"journal_size_limit={WAL_LIMIT}",
            "temp_store=MEMORY",
            "secure_delete=ON",  # freed bytes are zeroed: nothing forgotten stays (forget.md)
        ):
            db.execute(f"PRAGMA {pragma}")
        for ext in list(self._extensions.values()):
            extensions.load(db, ext)  # (registered ones are in it already)
        with self._places_lock:
            self._connections.append(db)
        self._local.db = db
        self._local.extensions = frozenset(self._extensions)
        return db

    def load_extension(self, ext: extensions.Extension) -> None:
        """Make `ext` available on this thread's connection and on every connection
        opened after (see `loomdb.store.extensions`); once per connection."""
        local = self._local
        if ext.name in local.extensions:
            return
        loaded = extensions.load(self._db, ext)
        self._extensions[ext.name] = ext
        if loaded:
            local.extensions = local.extensions | {ext.name}
        elif local.depth:
            raise InvalidInput("store", f"the {ext.name} extension is first needed inside "
                               "a transaction on a connection that must be reopened for it")
        else:
            self._reopen()

    def _reopen(self) -> None:
        """Replace this thread's idle connection by a new one."""
        old = self._local.db
        if old is not None:
            with self._places_lock:
                self._connections = [c for c in self._connections if c is not old]
            old.close()
        self._local.db = None
        self._connect()

    # -- lifecycle -------------------------------------------------------------------
    def close(self) -> None:
        """Close every thread's connection (each thread's own, when it is idle), after
        a checkpoint that truncates the WAL, so a closed store is one small file (a
        reader elsewhere may keep the checkpoint from finishing: that is fine)."""
        with self._places_lock:
            self._closed = True
            connections, self._connections = self._connections, []
        for db in connections[:1]:
            try:
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error:
                pass
        for db in connections:
            db.close()
        self._local.db = None

    def _begin(self) -> None:
        if not self._writer.acquire(timeout=self.timeout):
            raise StoreBusy("sqlite", f"no write turn within {self.timeout:g} s")
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except BaseException as exc:
            self._writer.release()
            if isinstance(exc, sqlite3.OperationalError) and _busy(exc):
                raise StoreBusy("sqlite", str(exc)) from exc
            raise
        self._local.pending = {}

    def _commit(self) -> None:
        try:
            self._db.execute("COMMIT")
        except BaseException as exc:
            instead = self._rollback(exc)
            if instead is not None:
                raise instead from exc
            raise
        local = self._local
        pending, local.pending = local.pending, None
        self._writer.release()
        if pending:
            with self._places_lock:
                for node_id, place in pending.items():
                    self._keep_place(node_id, place)

    def _rollback(self, exc: BaseException) -> BaseException | None:
        self._local.pending = None  # places handed out by the rolled-back work
        try:
            db = self._db
            if db.in_transaction:
                db.execute("ROLLBACK")
        finally:
            self._writer.release()
        if isinstance(exc, sqlite3.OperationalError) and _busy(exc):
            return StoreBusy("sqlite", str(exc))
        return None

    def migrate(self) -> list[str]:
        if set(migrations.names("sqlite")) <= set(self.applied_migrations()):
            return []  # the everyday open: one read, no write lock, no script read
        applied: list[str] = []
        with self.transaction():
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS loomdb_migrations "
                "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
            done = set(self.applied_migrations())
            for name, sql in migrations.scripts("sqlite"):
                if name in done:
                    continue
                for stmt in migrations.statements(sql, sqlite3.complete_statement):
                    self._db.execute(stmt)
                self._db.execute("INSERT INTO loomdb_migrations VALUES (?, ?)", (name, now()))
                applied.append(name)
        return applied

    def _refuse_foreign(self) -> None:
        """Never touch another program's database (not even its journal mode): a file
        with tables of its own and no migration record is not a loomdb store. Read
        through a read-only connection before the store's first one."""
        if not self.path.is_file() or self.path.stat().st_size == 0:
            return
        probe = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            names = [r[0] for r in probe.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'"
                " AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        finally:
            probe.close()
        if names and "loomdb_migrations" not in names:
            raise StoreUnavailable(
                str(self.path), "a SQLite database of another program, not a loomdb store"
                f" (tables {', '.join(names[:4])})", "give loomdb its own folder or file")

    def applied_migrations(self) -> list[str]:
        try:
            rows = self._db.execute("SELECT name FROM loomdb_migrations ORDER BY name")
        except sqlite3.OperationalError:
            return []
        return [r[0] for r in rows]

    # -- trees: their statistics read the segments ------------------------------------
    BLOB_BODIES = "SELECT body FROM nodes WHERE body IS NOT NULL AND body LIKE '%sha256:%'"
    TREE_STATS = (
        TREE_COLUMNS + f" (SELECT count(*) FROM {_tree_rows('t.id')}),"
        f" (SELECT max(n.created_at) FROM {_tree_rows('t.id')}) FROM trees t "
    )

    # -- content ---------------------------------------------------------------------
    def get_content(self, content_id: str) -> bytes | None:
        row = self._db.execute(
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
                    last = self._db.execute("SELECT max(key) FROM nodes").fetchone()[0]
                    seg_key = ((last or 0) >> POS_BITS) + 1 << POS_BITS
                key, parent_key = seg_key, pkey
            try:
                self._db.execute(
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
                    holder = self._db.execute(
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
            self._db.executemany(
                "INSERT INTO node_sources VALUES (?,?,?,?,?)",
                [(node.id, i, src, role, node.tree) for i, (src, role) in enumerate(node.sources)],
            )
        if node.selections:
            self._db.executemany(
                "INSERT INTO node_selections VALUES (?,?,?,?)",
                [(node.id, slot, ver, node.tree) for slot, ver in node.selections.items()],
            )

    def _place(self, node_id: str) -> Place:
        """(key, slot, whether a child already follows it in its segment) of a node:
        where its children go and what they hang from. The last part is a hint (another
        writer may have added a child since): inserting finds out for sure."""
        pending = self._local.pending
        place = pending.get(node_id) if pending else None
        if place is None:
            place = self._places.get(node_id)
        if place is None:
            row = self._db.execute(
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
        pending = self._local.pending
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
        row = self._db.execute(
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
        for chunk in _chunks(list(ids)):
            rows += self._db.execute(
                f"SELECT {_NODE_COLS} FROM {_NODE_FROM} WHERE n.id IN ({_marks(len(chunk))})",
                chunk,
            ).fetchall()
        return self._nodes(rows)

    def _nodes(self, rows: list[tuple[Any, ...]]) -> dict[str, Node]:
        return build_nodes(self, rows)

    def node_ids_with_prefix(self, prefix: str, limit: int) -> list[str]:
        rows = self._db.execute(
            "SELECT id FROM nodes WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
            (prefix, prefix + "\uffff", limit),
        )
        return [r[0] for r in rows]

    def walk(self, node_id: str) -> list[PathRow]:
        # climb segment by segment (the first node of each names its parent's key), then
        # read each segment's part of the path as one rowid range
        return self._db.execute(
            "WITH RECURSIVE segs(lo, hi) AS ("
            f" SELECT (key >> {POS_BITS}) << {POS_BITS}, key FROM nodes WHERE id = ?"
            " UNION ALL"
            f" SELECT (s.parent_key >> {POS_BITS}) << {POS_BITS}, s.parent_key FROM segs"
            " JOIN nodes s ON s.key = segs.lo WHERE s.parent_key IS NOT NULL)"
            f" SELECT {_WALK_COLS} FROM segs JOIN nodes n ON n.key BETWEEN segs.lo AND segs.hi"
            " LEFT JOIN nodes b ON b.key = n.body_key ORDER BY n.depth DESC",
            (node_id,),
        ).fetchall()

    def path_rows(self, ids: Sequence[str]) -> dict[str, PathRow]:
        out: dict[str, tuple[Any, ...]] = {}
        for chunk in _chunks(list(ids)):
            for row in self._db.execute(
                f"SELECT {_WALK_COLS} FROM {_NODE_FROM} WHERE n.id IN ({_marks(len(chunk))})",
                chunk,
            ):
                out[row[0]] = row
        return out

    def node_selections(self, ids: Sequence[str]) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        for chunk in _chunks(list(ids)):
            for node, slot, version in self._db.execute(
                "SELECT node_id, slot_id, version_id FROM node_selections"
                f" WHERE node_id IN ({_marks(len(chunk))})",
                chunk,
            ):
                out.setdefault(node, {})[slot] = version
        return out

    def node_sources(self, ids: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
        out: dict[str, list[tuple[str, str]]] = {}
        for chunk in _chunks(list(ids)):
            for node, source, role in self._db.execute(
                "SELECT node_id, source_id, role FROM node_sources"
                f" WHERE node_id IN ({_marks(len(chunk))}) ORDER BY node_id, position",
                chunk,
            ):
                out.setdefault(node, []).append((source, role))
        return out

    def children(self, slot: str) -> list[str]:
        # children that start a segment are indexed; one that continues the segment of
        # a version of the slot is the row right after that version
        rows = self._db.execute(
            "SELECT id FROM (SELECT id, created_at FROM nodes"
            " WHERE tree_id = (SELECT tree_id FROM nodes WHERE id = ?1) AND parent_slot = ?1"
            f" AND {_STARTS} AND edited_from IS NULL"
            f" UNION ALL SELECT c.id, c.created_at FROM ({_VERSION_KEYS}) v"
            " JOIN nodes c ON c.key = v.key + 1 AND c.parent_id = v.id AND c.parent_key IS NULL)"
            " ORDER BY created_at, id",
            (slot,),
        )
        return [r[0] for r in rows]

    def versions(self, slot: str) -> list[str]:
        rows = self._db.execute(
            "SELECT id FROM nodes WHERE id = ? UNION ALL SELECT id FROM"
            " (SELECT id FROM nodes WHERE slot_id = ? AND edited_from IS NOT NULL"
            " ORDER BY created_at, id)",
            (slot, slot),
        )
        return [r[0] for r in rows]

    def _whole_tree(self, tree_id: str) -> str:
        """FROM clause for reading all of a tree: its segments' key ranges, or one pass
        over the table when the tree holds most of the store's segments (a big, bushy
        tree: one seek per short segment then costs more than reading past the rest)."""
        mine = self._db.execute(
            f"SELECT count(*) FROM nodes WHERE tree_id = ? AND {_STARTS}", (tree_id,)
        ).fetchone()[0]
        last = self._db.execute("SELECT max(key) FROM nodes").fetchone()[0] or 0
        if mine > 1000 and mine * 4 > last >> POS_BITS:
            return "nodes n WHERE n.tree_id = ?"
        return _tree_rows()

    def leaves(self, tree_id: str) -> list[str]:
        # one scan of the tree, then sets: cheaper than an anti-join per node when only
        # segment starts are indexed by parent
        with gc_paused():
            return self._leaves(tree_id)

    def _leaves(self, tree_id: str) -> list[str]:
        rows = self._db.execute(
            f"SELECT n.id, n.created_at, n.slot_id, n.parent_slot FROM {self._whole_tree(tree_id)}",
            (tree_id,),
        ).fetchall()
        parents = {r[3] for r in rows}
        return [i for _, i in sorted((r[1], r[0]) for r in rows if r[2] not in parents)]

    def branch_points(self, tree_id: str) -> list[str]:
        with gc_paused():
            return self._branch_points(tree_id)

    def _branch_points(self, tree_id: str) -> list[str]:
        rows = self._db.execute(
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
        cursor = self._db.execute(
            f"SELECT {_NODE_COLS} FROM {_tree_rows()} LEFT JOIN nodes b ON b.key = n.body_key"
            " ORDER BY n.created_at, n.id",
            (tree_id,),
        )
        while batch := cursor.fetchmany(2000):
            yield from self._nodes(batch).values()

    def chain_rows(self, tree_id: str) -> Iterator[ChainRow]:
        cursor = self._db.execute(
            "SELECT n.id, n.parent_id, n.content_id, coalesce(n.body, b.body), n.created_at,"
            " n.author, n.role, n.kind, n.edited_from, n.options, n.provenance, n.chain_hash,"
            f" n.flags FROM {_tree_rows()} LEFT JOIN nodes b ON b.key = n.body_key",
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
        found = self._db.execute("SELECT tree_id FROM nodes WHERE id = ?", (slot,)).fetchone()
        if found is None:
            return []
        rows = self._db.execute(
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

    # -- edges -----------------------------------------------------------------------
    def insert_edge(self, edge: Edge) -> None:
        self._db.execute(
            "INSERT INTO edges VALUES (?,?,?,?,?)",
            (edge.id, edge.tree, edge.type, edge.target, edge.created_at),
        )
        self._db.executemany(
            "INSERT INTO edge_sources VALUES (?,?,?,?)",
            [(edge.id, i, src, role) for i, (src, role) in enumerate(edge.sources)],
        )

    def edges_of(self, node_id: str) -> list[Edge]:
        rows = self._db.execute(
            "SELECT e.id, e.tree_id, e.type, e.target_id, e.created_at, s.source_id, s.role"
            " FROM edges e JOIN edge_sources s ON s.edge_id = e.id"
            " WHERE e.id IN (SELECT id FROM edges WHERE target_id = ?"
            " UNION SELECT edge_id FROM edge_sources WHERE source_id = ?)"
            " ORDER BY e.id, s.position",
            (node_id, node_id),
        ).fetchall()
        edges: dict[str, list[Any]] = {}
        for eid, tree, etype, target, created, source, role in rows:
            edges.setdefault(eid, [tree, etype, target, created, []])[4].append((source, role))
        return [Edge(eid, t, ty, tuple(src), tg, c) for eid, (t, ty, tg, c, src) in edges.items()]

    # -- refs (the head is the last line of the log) -----------------------------------
    def _refs(self, where: str, args: Sequence[Any]) -> list[Ref]:
        """Refs with their heads and selections in one query (no query per ref)."""
        return refs_from_rows(self._db.execute(_REF_SELECT + f"{where} ORDER BY r.name", args))

    def get_ref(self, name: str) -> Ref | None:
        found = self._refs("WHERE r.name = ?", (name,))
        return found[0] if found else None

    def list_refs(self, kind: str | None = None, tree_id: str | None = None) -> list[Ref]:
        conds, args = [], []
        if kind:
            conds.append("r.kind = ?")
            args.append(kind)
        if tree_id:
            conds.append("r.tree_id = ?")
            args.append(tree_id)
        return self._refs(("WHERE " + " AND ".join(conds)) if conds else "", args)

    def insert_ref(self, ref: Ref, move: RefMove | None) -> bool:
        cur = self._db.execute(
            "INSERT OR IGNORE INTO refs VALUES (?,?,?,?,?)",
            (ref.name, ref.kind, ref.tree, dumps(ref.origin), ref.created_at),
        )
        if not cur.rowcount:
            return False
        if ref.selections:
            self._db.executemany(
                "INSERT INTO ref_selections VALUES (?,?,?)",
                [(ref.name, s, v) for s, v in ref.selections.items()],
            )
        last = self._db.execute(
            "SELECT new_node FROM ref_log WHERE ref_name = ? ORDER BY seq DESC LIMIT 1",
            (ref.name,),
        ).fetchone()
        if move is None and (last is None or last[0] != ref.node):
            # the head is the log's last line: a copied log that ends elsewhere gets one
            move = RefMove(0, ref.name, ref.updated_at, last and last[0], ref.node, "loomdb",
                           "copy: head")
        if move is not None:
            self.log_move(move)
        return True

    def move_ref(self, move: RefMove) -> bool:
        try:
            self._db.execute(
                "INSERT INTO ref_log VALUES (?,?,?,?,?,?,?,?)",
                (move.ref, move.seq, move.at, move.old, move.new, move.actor, move.reason,
                 move.tree),
            )
        except sqlite3.IntegrityError:
            return False  # line seq is taken: the ref changed since it was read
        return True

    # -- shared SQL and raw access ---------------------------------------------------
    def q_all(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._db.execute(sql, args).fetchall()

    def q_one(self, sql: str, args: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = self._db.execute(sql, args).fetchone()
        return row

    def q_run(self, sql: str, args: Sequence[Any] = ()) -> int:
        return self._db.execute(sql, args).rowcount

    def q_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self._db.executemany(sql, rows)

    def ids_in(self, column: str, ids: Sequence[str]) -> Iterator[tuple[str, list[Any]]]:
        for chunk in _chunks(list(ids)):
            yield f"{column} IN ({_marks(len(chunk))})", list(chunk)

    def execute(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run raw SQL (tests use it to tamper with the file; tools to inspect plans)."""
        return self._db.execute(sql, args).fetchall()
