"""PostgreSQL helpers for the tests: a throwaway database per test, and a loud failure
(never a skip) when the server cannot be reached.

The server is $LOOMDB_TEST_PG (a libpq URL of a database we may connect to and that
may CREATE DATABASE), by default the local trust-auth cluster the CI starts.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

ADMIN_URL = os.environ.get("LOOMDB_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")

_checked = False


class PostgresUnavailable(RuntimeError):
    """The PostgreSQL test server is not reachable: the suite must fail, not skip."""


def _connect(url: str):  # type: ignore[no-untyped-def]
    import psycopg

    return psycopg.connect(url, autocommit=True, connect_timeout=5)


def postgres_available() -> None:
    """Raise PostgresUnavailable (with what to do) when the test server cannot be reached."""
    global _checked
    if _checked:
        return
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise PostgresUnavailable(
            "psycopg is not installed: pip install 'loomdb[postgres]' "
            "(or run with LOOMDB_TEST_BACKENDS=sqlite)"
        ) from exc
    try:
        with _connect(ADMIN_URL) as conn:
            conn.execute("SELECT 1")
    except Exception as exc:
        raise PostgresUnavailable(
            f"cannot reach PostgreSQL at {ADMIN_URL} ({exc}). Start it "
            "(pg_ctlcluster --skip-systemctl-redirect <version> main start, or .ci/run), "
            "point LOOMDB_TEST_PG at a server, or run with LOOMDB_TEST_BACKENDS=sqlite"
        ) from exc
    _checked = True


#: a test database's commits do not wait for the disk: the tests crash clients, never this
#: server (the tests' own cluster in cluster.py keeps its durability), and a commit's
#: fsync on two cores shared with the whole suite cost a third of a PostgreSQL test
_FAST_COMMITS = "SET synchronous_commit TO off"


def _create(conn, name: str, template: str, options: str = "") -> None:  # type: ignore[no-untyped-def]
    conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}" ENCODING \'UTF8\' {options}')
    conn.execute(f'ALTER DATABASE "{name}" {_FAST_COMMITS}')


def database_url(name: str) -> str:
    """The admin URL with its database replaced by `name`."""
    parts = urlsplit(ADMIN_URL)
    return urlunsplit(parts._replace(path="/" + name))


_template: str | None = None
#: the template's shape (see `_SHAPE`), and its used copies emptied for the next test
_template_shape: tuple[object, ...] | None = None
_pool: list[str] = []

#: what makes a store other than an emptied copy of the template: its relations, its
#: functions, triggers, extensions and types, and the migrations it recorded
_SHAPE = """SELECT
 (SELECT array_agg(c.relkind::text || ':' || c.relname ORDER BY c.relname, c.relkind)
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname = current_schema()),
 (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
   WHERE n.nspname = current_schema()),
 (SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal),
 (SELECT count(*) FROM pg_extension),
 (SELECT count(*) FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
   WHERE n.nspname = current_schema() AND t.typtype IN ('e', 'd', 'r')),
 (SELECT string_agg(m::text, ',' ORDER BY m::text) FROM loomdb_migrations m)"""


def _shape(conn) -> tuple[object, ...]:  # type: ignore[no-untyped-def]
    row = conn.execute(_SHAPE).fetchone()
    return tuple(row)


def _migrated_template() -> str:
    """This process's template database: an empty store with the core's migrations run,
    made once (a test's store is then a copy of it, not a dozen migrations again)."""
    global _template, _template_shape
    if _template is None:
        import loomdb

        name = f"loomdb_tmpl_{os.getpid()}_{secrets.token_hex(3)}"
        with _connect(ADMIN_URL) as conn:
            _create(conn, name, "template0")
        with loomdb.open(database_url(name)):
            pass
        with _connect(database_url(name)) as conn:
            _template_shape = _shape(conn)
        _template = name
    return _template


def _emptied(name: str) -> bool:
    """Empty a used copy of the template for the next test, when nothing but rows
    changed in it (no area's tables, no other migration, nobody still connected);
    False when it must be dropped instead."""
    try:
        with _connect(database_url(name)) as conn:
            others = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid()").fetchone()
            if others is None or others[0] or _shape(conn) != _template_shape:
                return False
            tables = [r[0] for r in conn.execute(
                "SELECT quote_ident(c.relname) FROM pg_class c JOIN pg_namespace n"
                " ON n.oid = c.relnamespace WHERE n.nspname = current_schema()"
                " AND c.relkind IN ('r', 'p') AND c.relname <> 'loomdb_migrations'")]
            conn.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE")
            return True
    except Exception:  # anything odd: the copy is dropped, never reused
        return False


def drop_template() -> None:
    """Drop this process's template database and its emptied copies (at the end of the
    test session)."""
    global _template
    with _connect(ADMIN_URL) as conn:
        for name in [*_pool, *([_template] if _template else [])]:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    _pool.clear()
    _template = None


@contextmanager
def fresh_postgres_url(options: str = "", *, migrated: bool = False) -> Iterator[str]:
    """A URL of a new database, dropped (WITH (FORCE)) when the block ends: empty, or
    with `migrated` an empty store whose core tables exist already (a copy of this
    process's template, or an earlier copy emptied again when only rows changed in
    it); `options` are more CREATE DATABASE options (a locale, say)."""
    postgres_available()
    reuse = migrated and not options
    if reuse and _pool:
        name = _pool.pop()
    else:
        name = f"loomdb_test_{secrets.token_hex(6)}"
        template = _migrated_template() if reuse else "template0"
        with _connect(ADMIN_URL) as conn:
            _create(conn, name, template, options)
    try:
        yield database_url(name)
    finally:
        if reuse and _emptied(name):
            _pool.append(name)
        else:
            with _connect(ADMIN_URL) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def store_of(kind: str, folder: str) -> Iterator[str]:
    """A fresh, empty store URL of a backend kind ("sqlite" or "postgres", a copy of the
    migrated template: see `fresh_postgres_url`); blobs and the SQLite file go under
    `folder`."""
    if kind == "sqlite":
        yield str(folder)
        return
    with fresh_postgres_url(migrated=True) as url:
        yield f"{url}?blobs=file://{folder}/blobs"
