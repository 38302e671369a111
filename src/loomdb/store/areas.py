"""Storage seam for areas that grow beside the core (documents, collections, search,
users, agents...).

An area owns its tables and its migrations and nothing else: it never reads or writes
the core's tables directly, only through the Loom's public operations. It declares
itself once::

    DOCUMENTS = Area("documents", "loomdb.documents")

with its scripts in `<package>/sql/<dialect>/NNNN_name.sql` (dialect `sqlite` or
`postgres`), and does all its SQL through a unit of work::

    with loom.unit(DOCUMENTS) as db:
        db.execute("INSERT INTO doc_heads VALUES (?, ?)", (name, rev))

A unit is one transaction; it joins an enclosing one (`loom.unit` inside another unit,
or inside a core write), so an area write and a core write commit or roll back
together. Placeholders are `?` in both dialects. The area's migrations are applied on
its first unit in a store and recorded as `<area>/NNNN_name` in `loomdb_migrations`,
in the same transaction, exactly once even when processes race. An area whose SQLite
SQL needs a loadable extension names it (`Area.extensions`); it is loaded on the
calling thread's connection before the area's units (see `loomdb.store.extensions`).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidInput
from ..model import now
from . import migrations
from .base import Backend
from .extensions import Extension

#: advisory lock key taken while an area's migrations are applied on PostgreSQL
_AREA_LOCK = 0x6C6F6F6D_61726561


@dataclass(frozen=True)
class Area:
    """A named group of tables with its own migrations (see the module docstring)."""

    name: str
    package: str
    #: SQLite extensions its SQL needs, loaded before its units (SQLite stores only)
    extensions: tuple[Extension, ...] = ()

    def scripts(self, dialect: str) -> list[tuple[str, str]]:
        """(recorded name, sql) of this area's migrations for a dialect, in order."""
        from importlib import resources  # (only when an area is first used)

        folder = resources.files(self.package) / "sql" / dialect
        if not folder.is_dir():
            raise InvalidInput(f"area {self.name}", f"no {dialect} migrations in {self.package}")
        found = sorted(p.name for p in folder.iterdir() if p.name.endswith(".sql"))
        return [(f"{self.name}/{n[: -len('.sql')]}", (folder / n).read_text("utf-8"))
                for n in found]


class Unit:
    """One transaction's access to the store, for an area's SQL (`?` placeholders).
    It belongs to the thread that opened it, as its transaction does."""

    def __init__(self, backend: Backend) -> None:
        self._backend = backend
        self.dialect: str = dialect_of(backend)
        self._thread = threading.get_ident()

    def execute(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement; return its rows (none for a statement without rows)."""
        if threading.get_ident() != self._thread:
            raise InvalidInput("unit", "a unit of work belongs to the thread that opened it")
        return self._backend.execute(sql, args)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement per row of arguments."""
        for row in rows:
            self.execute(sql, row)

    def one(self, sql: str, args: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        """The first row of a query, or None."""
        rows = self.execute(sql, args)
        return rows[0] if rows else None

    def script(self, sql: str) -> None:
        """Run a script of several statements (migrations)."""
        if self.dialect == "postgres":
            self.execute(sql)  # sent as written: several statements in one trip
            return
        for stmt in migrations.statements(sql, sqlite3.complete_statement):
            self.execute(stmt)


def dialect_of(backend: Backend) -> str:
    """`sqlite` or `postgres`: which scripts and SQL a backend takes."""
    dialect = getattr(backend, "dialect", None)
    if dialect not in ("sqlite", "postgres"):
        raise InvalidInput("store", f"backend {type(backend).__name__} has no SQL dialect")
    return str(dialect)


@contextmanager
def unit(backend: Backend, area: Area) -> Iterator[Unit]:
    """A unit of work for `area` on `backend`, its migrations applied first."""
    if area.extensions and dialect_of(backend) == "sqlite":
        for ext in area.extensions:
            backend.load_extension(ext)  # type: ignore[attr-defined]
    _ensure(backend, area)
    with backend.transaction():
        yield Unit(backend)


def _ensure(backend: Backend, area: Area) -> None:
    ready: set[str] = backend.__dict__.setdefault("_areas_ready", set())
    if area.name in ready:
        return
    db = Unit(backend)
    scripts = area.scripts(db.dialect)
    if {name for name, _ in scripts} - set(backend.applied_migrations()):
        with backend.transaction():
            if db.dialect == "postgres":
                db.execute("SELECT pg_advisory_xact_lock(?)", (_AREA_LOCK,))
            done = set(backend.applied_migrations())
            for name, sql in scripts:
                if name not in done:
                    db.script(sql)
                    db.execute("INSERT INTO loomdb_migrations VALUES (?, ?)",
                               (name, now()))
    ready.add(area.name)

