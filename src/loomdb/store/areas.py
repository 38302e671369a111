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

A store copy (`loomdb migrate`) carries every area the source records, without
importing the areas up front: `recorded` maps the names in `loomdb_migrations` to
their Area (`BUILTIN` says where loomdb's own are declared; any other registers itself
when its package is imported), `Area.tables` lists an area's tables from its own
migrations, and `loomdb.store.areacopy` copies their rows. An area whose rows are
derived from the others (the search index) says so (`derived`) and names a `rebuild`
hook instead, run at the target after the copy.

An area that must hear of the core's writes (the search index queues every new node)
names its hooks object (`Area.hooks`, "module:NAME"; see `loomdb.hooks.AreaHooks`):
the core calls `nodes_written` after inserting nodes, inside the write's transaction,
for each area the store records whose hooks define it. Named, not imported, so that
the store layer never imports an area, and a store without the area pays nothing.
"""

from __future__ import annotations

import importlib
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import InvalidInput
from ..model import now
from . import migrations
from .base import Backend
from .extensions import Extension

if TYPE_CHECKING:
    from ..model import Node

#: advisory lock key taken while an area's migrations are applied on PostgreSQL
_AREA_LOCK = 0x6C6F6F6D_61726561

#: where each area loomdb ships is declared ("module:NAME"): a store copy imports only
#: the ones a store records (`recorded`). A new area adds its line here.
BUILTIN = {
    "agents": "loomdb.agents:AGENTS",
    "claude_sessions": "loomdb.integrations.claude_agent_sdk.area:SESSIONS",
    "collections": "loomdb.collections:COLLECTIONS",
    "documents": "loomdb.documents:DOCUMENTS",
    "gateway": "loomdb.exchanges.paths:GATEWAY",
    "langgraph": "loomdb.integrations.langgraph.area:LANGGRAPH",
    "pieces": "loomdb.pieces:PIECES",
    "references": "loomdb.references:REFERENCES",
    "retention": "loomdb.forget:RETENTION",
    "search": "loomdb.search:SEARCH",
    "semantic": "loomdb.search.semantic:SEMANTIC",
    "shares": "loomdb.shares:SHARES",
    "users": "loomdb.users.accounts:USERS",
}
#: every Area constructed in this process, by name (areas outside loomdb register so)
_DECLARED: dict[str, Area] = {}

# the statements of a migration that make, rename and remove tables (see Area.tables)
_TABLE_DDL = re.compile(
    r"^\s*(?:CREATE\s+(?P<virtual>VIRTUAL\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(?P<created>\"?\w+\"?)"
    r"|DROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?P<dropped>\"?\w+\"?)"
    r"|ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?P<old>\"?\w+\"?)\s+RENAME\s+TO\s+(?P<new>\"?\w+\"?))",
    re.IGNORECASE | re.MULTILINE,
)


@dataclass(frozen=True)
class Area:
    """A named group of tables with its own migrations (see the module docstring)."""

    name: str
    package: str
    #: SQLite extensions its SQL needs, loaded before its units (SQLite stores only)
    extensions: tuple[Extension, ...] = ()
    #: its rows are computed from other data (an index): a store copy does not carry
    #: them, the target computes them again (`rebuild`, or on the area's next use)
    derived: bool = False
    #: "module:function" that recomputes a derived area at a copy's target: called
    #: with the target Loom inside the copy's transaction when the source or the
    #: target has the area; returns what it wrote ({what: count}). Named, not
    #: imported, so that the store layer never imports the area (layering).
    rebuild: str | None = None
    #: "module:NAME" of the area's hooks object (`loomdb.hooks.AreaHooks`): what it
    #: does on the core's writes (`nodes_written`) and offers the other areas
    #: (addresses, search entries, forgetting). Imported on first use only.
    hooks: str | None = None

    def __post_init__(self) -> None:
        _DECLARED[self.name] = self

    def scripts(self, dialect: str) -> list[tuple[str, str]]:
        """(recorded name, sql) of this area's migrations for a dialect, in order."""
        from importlib import resources  # (only when an area is first used)

        folder = resources.files(self.package) / "sql" / dialect
        if not folder.is_dir():
            raise InvalidInput(f"area {self.name}", f"no {dialect} migrations in {self.package}")
        found = sorted(p.name for p in folder.iterdir() if p.name.endswith(".sql"))
        return [(f"{self.name}/{n[: -len('.sql')]}", (folder / n).read_text("utf-8"))
                for n in found]

    def tables(self, dialect: str) -> list[str]:
        """The tables its migrations leave, in the order they were created: a table is
        created after the tables it references, so this is an order to copy them in.
        A virtual table (FTS5, vec0) cannot be copied row by row: only a derived area
        may have one."""
        tables: list[str] = []
        for _, sql in self.scripts(dialect):
            for m in _TABLE_DDL.finditer(sql):
                name = (m["created"] or m["dropped"] or m["old"]).strip('"').lower()
                if m["virtual"] and not self.derived:
                    raise InvalidInput(f"area {self.name}",
                                       f"virtual table {name} cannot be copied: declare the "
                                       "area derived, with a rebuild hook")
                if m["created"] and not m["virtual"]:
                    tables.append(name)
                elif m["dropped"]:
                    tables = [t for t in tables if t != name]
                elif m["old"]:
                    tables = [m["new"].strip('"').lower() if t == name else t for t in tables]
        return tables

    def rebuild_hook(self) -> Callable[[Any], dict[str, int]] | None:
        """The `rebuild` function, imported; None for an area without one."""
        if self.rebuild is None:
            return None
        module, _, attr = self.rebuild.partition(":")
        hook: Callable[[Any], dict[str, int]] = getattr(importlib.import_module(module), attr)
        return hook

    def hooks_object(self) -> Any:
        """The `hooks` object, imported; None for an area without one."""
        if self.hooks is None:
            return None
        module, _, attr = self.hooks.partition(":")
        return getattr(importlib.import_module(module), attr)


class WriteHook(Protocol):
    """What an area's hooks define to hear of the core's writes."""

    def nodes_written(self, db: Unit, nodes: Sequence[Node]) -> None:
        """Nodes just inserted, inside the transaction that inserted them (a raise
        rolls the write back). Keep it to a small insert: it is on the append path."""


def nodes_written(backend: Backend, nodes: Sequence[Node]) -> None:
    """The core's call after it inserts nodes (an append, an import, a copy, a
    tombstone), inside the same transaction: every area of the store whose hooks
    define `nodes_written` sees them. Which areas is worked out on a backend's first
    write, and again when the store may have a new area (`Backend.areas_stamp`
    changed: made by any process)."""
    stamp = backend.areas_stamp()
    known: tuple[object, tuple[WriteHook, ...]] | None = backend.__dict__.get("_write_hooks")
    hooks = known[1] if known is not None and known[0] == stamp else _write_hooks(backend, stamp)
    if hooks and nodes:
        db = Unit(backend)
        for hook in hooks:
            hook.nodes_written(db, nodes)


def _write_hooks(backend: Backend, stamp: object) -> tuple[WriteHook, ...]:
    found: list[WriteHook] = []
    for area in recorded(backend, known_only=True):
        hooks = area.hooks_object()
        if hooks is not None and callable(getattr(hooks, "nodes_written", None)):
            prepare(backend, area)  # its missing migrations first (the trigger it replaces)
            found.append(hooks)
    out = tuple(found)
    backend.__dict__["_write_hooks"] = (stamp, out)
    return out


class BlockHook(Protocol):
    """What the area owning a kind of block (`BLOCK_AREAS`) defines: the references
    such blocks hold are resolved when content is written and expanded when a context
    is assembled (a prompt piece's name: `loomdb.pieces`)."""

    def written(self, loom: Any, blocks: list[dict[str, Any]], where: str) -> list[dict[str, Any]]:
        """The blocks as stored, or a one-line refusal (nothing written)."""

    def written_options(self, loom: Any, options: dict[str, Any] | None,
                        where: str) -> dict[str, Any] | None:
        """Options as stored (an option naming the area's things resolved)."""

    def expand_context(self, loom: Any, tree_id: str, ctx: dict[str, Any]) -> dict[str, Any]:
        """A context of a path of `tree_id` with the blocks expanded."""


#: the block types (and the option) whose references an area resolves and expands
BLOCK_AREAS = {"piece": "pieces"}
#: the option naming a thread's system piece (resolved and expanded as a piece block)
PIECE_OPTION = "system_piece"


def block_hooks(kind: str) -> BlockHook:
    """The hooks of the area owning blocks of `kind` (imported by name: the store layer
    never imports an area)."""
    hooks: BlockHook = find(BLOCK_AREAS[kind]).hooks_object()
    return hooks


def recorded(backend: Backend, *, known_only: bool = False) -> list[Area]:
    """The areas whose migrations a store records, by name. An area loomdb does not
    ship must have been imported (its Area declared) to be found; one that is not is
    refused, or left out with `known_only`."""
    names = sorted({n.split("/", 1)[0] for n in backend.applied_migrations() if "/" in n})
    if known_only:
        names = [n for n in names if n in _DECLARED or n in BUILTIN]
    return [find(name) for name in names]


def known() -> list[Area]:
    """Every area this process knows: loomdb's own (`BUILTIN`, imported) and any other
    declared, by name."""
    return [find(name) for name in sorted(set(BUILTIN) | set(_DECLARED))]


def find(name: str) -> Area:
    """The Area called `name`: declared in this process, or one of `BUILTIN`."""
    if name not in _DECLARED and name in BUILTIN:
        module, _, attr = BUILTIN[name].partition(":")
        try:
            getattr(importlib.import_module(module), attr)
        except ImportError as exc:  # its package needs an extra this install lacks
            raise InvalidInput(f"area {name!r}", f"is declared in {module}, which cannot be "
                               f"imported here ({exc}): install the extra it needs") from exc
    area = _DECLARED.get(name)
    if area is None:
        raise InvalidInput(f"area {name!r}",
                           "is recorded in the store but not known here: import the package "
                           "that declares it first")
    return area


def applied(backend: Backend, area: Area) -> bool:
    """Whether any migration of `area` is recorded in the store."""
    return any(n.startswith(area.name + "/") for n in backend.applied_migrations())


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

    def where_in(self, column: str, values: Sequence[Any]) -> Iterator[tuple[str, list[Any]]]:
        """(condition, args) pairs that together select `column` in `values`: chunks
        of bound values, which both dialects take (nothing for no values)."""
        for i in range(0, len(values), 500):
            part = list(values[i:i + 500])
            yield f"{column} IN ({','.join('?' * len(part))})", part

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
    prepare(backend, area)
    with backend.transaction():
        yield Unit(backend)


def prepare(backend: Backend, area: Area) -> None:
    """Make `area` usable on `backend` without opening a unit: its extensions loaded,
    its missing migrations applied (in a transaction only when some are missing, so a
    store that is only read stays untouched)."""
    if area.extensions and dialect_of(backend) == "sqlite":
        for ext in area.extensions:
            backend.runner.load_extension(ext)  # type: ignore[attr-defined]
    _ensure(backend, area)


def _ensure(backend: Backend, area: Area) -> None:
    """Apply the area's missing migrations, then remember (per backend) that it is ready.
    Migrations applied inside an enclosing transaction are not remembered by the thread
    that applied them until it checks again outside any transaction: that transaction
    may still roll back (a failed store copy), taking the tables with it."""
    ready: set[str] = backend.__dict__.setdefault("_areas_ready", set())
    if area.name in ready:
        return
    tentative: set[str] = backend.runner._local.__dict__.setdefault("areas_tentative", set())
    if backend.committed():
        tentative.clear()  # the transactions that applied them have ended, either way
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
            if db.dialect == "postgres":  # every process's writers look again
                db.execute("NOTIFY loomdb_areas")
            backend.__dict__.pop("_write_hooks", None)
        if not backend.committed():
            tentative.add(area.name)
    if area.name not in tentative:
        ready.add(area.name)

