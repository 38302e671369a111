"""PostgreSQL's runner: a pool of connections, and the read and write seams.

One backend object serves every thread of a process: a transaction holds one pooled
connection from its begin to its end, for its thread alone; a read outside a
transaction borrows one for that statement. Waiting longer than the pool's timeout
for a free connection raises `StoreBusy`.

* Connections are in autocommit mode outside `transaction()`, so a read never
  leaves a transaction open; statements are prepared server-side on first reuse and
  id lists are bound as one array parameter, so every query text is constant.
* Every statement goes through one of two seams: `_read` (outside a transaction: the
  router of replicas.py may send it to a hot standby that has this store's writes)
  and `_write` or the transaction's connection (the primary). A server that refuses a
  write as read-only raises `ReadOnlyStore`.
* A transaction PostgreSQL aborts (deadlock, serialization failure) surfaces as
  `TransientConflict`, a RefConflict, which the Loom's `retry` policy retries.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from ...errors import (
    LoomError,
    MissingExtra,
    ReadOnlyStore,
    RefConflict,
    StoreBusy,
    StoreUnavailable,
)
from ..replicas import CONNECT_TIMEOUT, ReplicaOptions, Router
from ..runner import SqlRunner, ThreadState
from ..unstorable import unstorable

try:
    import psycopg
    import psycopg_pool
    from psycopg import errors as pg_errors
except ImportError:  # pragma: no cover - exercised only without the extra
    psycopg = None  # type: ignore[assignment]

T = TypeVar("T")


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



class Connections(SqlRunner):
    """The pooled connections of one PostgreSQL store and the transactions on them."""

    def __init__(self, url: str, *, conninfo: str | None = None,
                 prepare_threshold: int | None = 1, pool_size: int = 8,
                 timeout: float = 60.0, replicas: ReplicaOptions | None = None) -> None:
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
        #: whether the database distributes tables with Citus (walks pin to one tree)
        self.citus = bool(found and found[0])
        #: how many partitions `nodes` has (0: not split; set by the backend's migrate)
        self.split = 0
        #: notices that an area was added (the backend's `areas_stamp`); a new
        #: connection may have missed one, so it counts as a notice too
        self.area_notices = 0
        self._pool = psycopg_pool.ConnectionPool(
            conninfo or url, kwargs=options, min_size=1, max_size=max(1, pool_size),
            timeout=timeout, num_workers=1, open=True, name=f"loomdb-{id(self):x}",
            configure=self._listen,
        )
        self._router = self._make_router(conninfo or url, options, replicas, pool_size)

    def _listen(self, conn: Any) -> None:
        """Each pooled connection hears `NOTIFY loomdb_areas` (sent when an area's
        migrations commit, by any process) with the results of its next statement."""
        # a hot standby refuses LISTEN (and no area's migrations commit on it)
        if not conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]:
            conn.execute("LISTEN loomdb_areas")
            conn.add_notify_handler(self._area_added)
        self._area_added(None)

    def _area_added(self, _notice: Any) -> None:
        self.area_notices += 1

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

    def run(self, sql: str, args: Sequence[Any] | None = None) -> Any:
        return self._write(lambda conn: conn.execute(sql, args))

    def fetch_all(self, sql: str, args: Sequence[Any] | None = None) -> list[tuple[Any, ...]]:
        return self._read(lambda conn: conn.execute(sql, args).fetchall())

    def fetch_one(self, sql: str, args: Sequence[Any] | None = None) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = self._read(lambda conn: conn.execute(sql, args).fetchone())
        return row

    def run_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        conn = self._local.conn
        if conn is None:
            with self.transaction():
                self.run_many(sql, rows)
            return
        with conn.cursor() as cur:
            cur.executemany(sql, rows)

    # shared SQL: `?` placeholders, translated once per statement text
    def q_all(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self.fetch_all(_qmark(sql), args)

    def q_one(self, sql: str, args: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        return self.fetch_one(_qmark(sql), args)

    def q_run(self, sql: str, args: Sequence[Any] = ()) -> int:
        return int(self.run(_qmark(sql), args).rowcount)

    def q_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self.run_many(_qmark(sql), rows)

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

    # -- lifecycle -------------------------------------------------------------------
    def script(self, sql: str) -> None:
        """Run a script of several statements in the thread's transaction, in one round
        trip (the simple query protocol)."""
        self._local.conn.execute(sql, prepare=False)

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

