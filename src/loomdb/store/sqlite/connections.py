"""SQLite's runner: one connection per thread, writers queued before BEGIN IMMEDIATE.

Writers serialize on `BEGIN IMMEDIATE` (threads of one process first queue on a lock,
so they do not poll the file lock), so every compare-and-swap inside a transaction is
exact; another process waits (busy timeout) instead of failing, and a write that waits
longer than that is `StoreBusy`, never sqlite3's "database is locked" (reads never wait
on writers in WAL mode). Each thread opens its own connection on first use: a reader
never sees another thread's uncommitted rows.

A transaction's node places (see `nodes.py`) are kept apart in its thread's state
until it commits, when they go to `on_commit`; a rollback drops them.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ...errors import InvalidInput, StoreBusy, StoreUnavailable
from .. import extensions
from ..runner import SqlRunner, ThreadState
from ..unstorable import CheckedConnection

CHUNK = 900  # stay under SQLite's bound-parameter limit
#: durability levels a store URL may ask for (`?synchronous=full`), see docs/durability.md:
#: `normal` (default) can lose the last commits on power loss, never corrupts; `full`
#: syncs the WAL at every commit
SYNCHRONOUS = ("normal", "full")
#: bytes of WAL kept on disk after a checkpoint (the autocheckpoint lets it grow to
#: ~40 MB between checkpoints, for append speed; this truncates it back)
WAL_LIMIT = 4 * 1024 * 1024
_BUSY = ("database is locked", "database table is locked", "database is busy")
#: the `application_id` in a store file's header ("loom"): a file that carries it is
#: known for a loomdb store from its first 100 bytes, without reading its schema
APPLICATION_ID = 0x6C6F6F6D


def chunks(ids: Sequence[str]) -> Iterator[Sequence[str]]:
    for i in range(0, len(ids), CHUNK):
        yield ids[i : i + CHUNK]


def marks(n: int) -> str:
    return ",".join("?" * n)


def _busy(exc: sqlite3.OperationalError) -> bool:
    return str(exc).startswith(_BUSY)


def _mark(db: sqlite3.Connection) -> None:
    """Write loomdb's `APPLICATION_ID` into a store's header (a new store, or one made
    before it was written), so later opens know the file by it; a store this process
    may not write keeps being known by its tables."""
    if db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID:
        return
    timeout = db.execute("PRAGMA busy_timeout").fetchone()[0]
    try:
        db.execute("PRAGMA busy_timeout = 0")  # never wait for it: the next open marks it
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    except sqlite3.OperationalError:
        pass
    finally:
        db.execute(f"PRAGMA busy_timeout = {int(timeout)}")


class _Thread(ThreadState):
    """One thread's connection, and what its open transaction handed out (kept apart
    until commit: a rolled-back node never existed for anyone)."""

    db: sqlite3.Connection | None = None
    pending: dict[str, Any] | None = None
    #: extensions loaded on `db`
    extensions: frozenset[str] = frozenset()


class Connections(SqlRunner):
    """The connections of one SQLite file and the transactions on them."""

    def __init__(self, path: Path, *, timeout: float, synchronous: str) -> None:
        if synchronous not in SYNCHRONOUS:
            raise InvalidInput("synchronous", f"{synchronous!r} is not one of {', '.join(SYNCHRONOUS)}")
        self.path = path
        self.url = f"sqlite:///{path}"
        self.timeout = timeout
        self.synchronous = synchronous
        self._local = _Thread()
        #: every thread's connection, to close them all
        self._connections: list[sqlite3.Connection] = []
        self._closed = False
        self._lock = threading.Lock()
        #: writers of this process queue here before BEGIN IMMEDIATE
        self._writer = threading.Lock()
        #: extensions some area asked for: loaded on every connection opened after
        self._extensions: dict[str, extensions.Extension] = {}
        #: what a committed transaction handed out (its thread's `pending`) goes here
        self.on_commit: Callable[[dict[str, Any]], None] = lambda pending: None
        try:
            marked = self._refuse_foreign()
            db = self._connect()  # the first connection sets WAL mode on the file, once
            if not marked:
                _mark(db)
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

    def _refuse_foreign(self) -> bool:
        """Never touch another program's database (not even its journal mode): a file
        with tables of its own and no migration record is not a loomdb store. Read
        through a read-only connection before the store's first one, unless the file's
        header carries loomdb's `APPLICATION_ID` (True: then nothing more is read)."""
        try:
            with open(self.path, "rb") as fh:
                header = fh.read(100)
        except (FileNotFoundError, IsADirectoryError):
            return False
        if not header:
            return False
        if len(header) == 100 and header.startswith(b"SQLite format 3\x00") and \
                int.from_bytes(header[68:72], "big") == APPLICATION_ID:
            return True
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
        return False

    @property
    def db(self) -> sqlite3.Connection:
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
        with self._lock:
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
        loaded = extensions.load(self.db, ext)
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
            with self._lock:
                self._connections = [c for c in self._connections if c is not old]
            old.close()
        self._local.db = None
        self._connect()

    def close(self) -> None:
        """Close every thread's connection (each thread's own, when it is idle), after
        a checkpoint that truncates the WAL, so a closed store is one small file (a
        reader elsewhere may keep the checkpoint from finishing: that is fine)."""
        with self._lock:
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

    # -- transactions ----------------------------------------------------------------
    def _begin(self) -> None:
        if not self._writer.acquire(timeout=self.timeout):
            raise StoreBusy("sqlite", f"no write turn within {self.timeout:g} s")
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except BaseException as exc:
            self._writer.release()
            if isinstance(exc, sqlite3.OperationalError) and _busy(exc):
                raise StoreBusy("sqlite", str(exc)) from exc
            raise
        self._local.pending = {}

    def _commit(self) -> None:
        try:
            self.db.execute("COMMIT")
        except BaseException as exc:
            instead = self._rollback(exc)
            if instead is not None:
                raise instead from exc
            raise
        local = self._local
        pending, local.pending = local.pending, None
        self._writer.release()
        if pending:
            self.on_commit(pending)

    def _rollback(self, exc: BaseException) -> BaseException | None:
        self._local.pending = None  # what the rolled-back work handed out
        try:
            db = self.db
            if db.in_transaction:
                db.execute("ROLLBACK")
        finally:
            self._writer.release()
        if isinstance(exc, sqlite3.OperationalError) and _busy(exc):
            return StoreBusy("sqlite", str(exc))
        return None

    def handed_out(self) -> dict[str, Any] | None:
        """What the calling thread's open transaction handed out so far (None outside
        a transaction): kept for `on_commit`."""
        pending: dict[str, Any] | None = self._local.pending
        return pending

    # -- SQL -------------------------------------------------------------------------
    def q_all(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self.db.execute(sql, args).fetchall()

    def q_one(self, sql: str, args: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = self.db.execute(sql, args).fetchone()
        return row

    def q_run(self, sql: str, args: Sequence[Any] = ()) -> int:
        return self.db.execute(sql, args).rowcount

    def q_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self.db.executemany(sql, rows)

    def ids_in(self, column: str, ids: Sequence[str]) -> Iterator[tuple[str, list[Any]]]:
        for chunk in chunks(list(ids)):
            yield f"{column} IN ({marks(len(chunk))})", list(chunk)

    def execute(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run raw SQL (tests use it to tamper with the file; tools to inspect plans)."""
        return self.db.execute(sql, args).fetchall()
