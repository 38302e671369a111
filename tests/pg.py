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


def database_url(name: str) -> str:
    """The admin URL with its database replaced by `name`."""
    parts = urlsplit(ADMIN_URL)
    return urlunsplit(parts._replace(path="/" + name))


_template: str | None = None


def _migrated_template() -> str:
    """This process's template database: an empty store with the core's migrations run,
    made once (a test's store is then a copy of it, not a dozen migrations again)."""
    global _template
    if _template is None:
        import loomdb

        name = f"loomdb_tmpl_{os.getpid()}_{secrets.token_hex(3)}"
        with _connect(ADMIN_URL) as conn:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE template0 ENCODING \'UTF8\'')
        with loomdb.open(database_url(name)):
            pass
        _template = name
    return _template


def drop_template() -> None:
    """Drop this process's template database (at the end of the test session)."""
    global _template
    if _template is not None:
        with _connect(ADMIN_URL) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{_template}" WITH (FORCE)')
        _template = None


@contextmanager
def fresh_postgres_url(options: str = "", *, migrated: bool = False) -> Iterator[str]:
    """A URL of a new database, dropped (WITH (FORCE)) when the block ends: empty, or
    with `migrated` an empty store whose core tables exist already; `options` are more
    CREATE DATABASE options (a locale, say)."""
    postgres_available()
    name = f"loomdb_test_{secrets.token_hex(6)}"
    template = _migrated_template() if migrated and not options else "template0"
    with _connect(ADMIN_URL) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}" ENCODING \'UTF8\' {options}')
    try:
        yield database_url(name)
    finally:
        with _connect(ADMIN_URL) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def store_of(kind: str, folder: str) -> Iterator[str]:
    """A fresh, empty store URL of a backend kind ("sqlite" or "postgres"); blobs and
    the SQLite file go under `folder`."""
    if kind == "sqlite":
        yield str(folder)
        return
    with fresh_postgres_url() as url:
        yield f"{url}?blobs=file://{folder}/blobs"
