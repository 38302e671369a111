"""The storage facade the Loom holds: small per-area stores over one runner.

A backend stores rows and answers indexed queries; it knows nothing of headish names,
version selection, hashing rules or context. Those live above it (graph, refs,
context, verify) and are enforced once for all backends. A backend must run each
`transaction()` as one atomic unit that serializes writers (SQLite: BEGIN IMMEDIATE;
PostgreSQL: a transaction plus row locks), so a compare-and-swap inside it is exact.

A backend is composed, not inherited: one runner (`runner.SqlRunner`: the connections,
transactions and the calls SQL runs on) and one small store per area, each holding
only its SQL and reached by name:

    backend.trees       trees.TreeStore            trees            SQL shared (TreeSQL)
    backend.nodes       nodes.NodeStore            nodes, walks     per dialect (hot paths)
    backend.edges       nodes.EdgeStore            edges            per dialect (keys differ)
    backend.meta        overlay.MetaStore          bookmarks, tags  SQL shared (MetaSQL)
    backend.refs        refs.RefStore              refs, log        head per dialect
    backend.provenance  provenance.ProvenanceStore generations...   SQL shared
    backend.drafts      drafts.DraftStore          buffer drafts    SQL shared
    backend.blob_meta   blobmeta.BlobMetaStore     blob size, type  SQL shared
    backend.forget      forget.ForgetStore         deletes, record  per dialect

One backend object is shared by every thread of a process. A transaction belongs to
the thread that opened it: it runs on that thread's own connection (SQLite: one per
thread; PostgreSQL: one borrowed from a pool for the transaction), so no thread ever
reads another's uncommitted rows, and `committed()` answers for the calling thread.
Areas beside the core (documents, search...) do not extend this facade: they own
their tables through `areas.Area` and `Loom.unit`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from .blobmeta import BlobMetaStore
from .drafts import DraftStore
from .forget import ForgetStore
from .nodes import (
    BODY,
    CACHE,
    DEPTH,
    FLAGS,
    HAS_SELECTIONS,
    HAS_SOURCES,
    ID,
    KIND,
    OPTIONS,
    PATH_COLUMNS,
    ROLE,
    SLOT,
    EdgeStore,
    NodeStore,
    PathRow,
)
from .overlay import MetaStore
from .provenance import ProvenanceStore
from .refs import RefStore
from .runner import SqlRunner, ThreadState, Transaction
from .trees import TreeStore

__all__ = [
    "BODY", "CACHE", "DEPTH", "FLAGS", "HAS_SELECTIONS", "HAS_SOURCES", "ID", "KIND",
    "OPTIONS", "PATH_COLUMNS", "ROLE", "SLOT", "Backend", "PathRow", "ThreadState",
]


class Backend(ABC):
    """Rows and indexed queries for one store; see the module docstring for the contract."""

    url: str
    #: `sqlite` or `postgres`: which migrations and area scripts a backend takes
    dialect: str
    #: the connections and transactions every store below runs on
    runner: SqlRunner
    trees: TreeStore
    nodes: NodeStore
    edges: EdgeStore
    meta: MetaStore
    refs: RefStore
    provenance: ProvenanceStore
    drafts: DraftStore
    blob_meta: BlobMetaStore
    forget: ForgetStore

    # -- lifecycle -------------------------------------------------------------------
    @abstractmethod
    def migrate(self) -> list[str]:
        """Apply pending migrations in order; return the names applied (none when current)."""

    @abstractmethod
    def applied_migrations(self) -> list[str]:
        """Names of the migrations recorded as applied, oldest first."""

    def areas_stamp(self) -> object:
        """A value that changes when another process may have added an area to the
        store (so the areas' write hooks are worked out again: `store.areas`), read
        cheaply on every write: SQLite's schema cookie, PostgreSQL's count of
        notices on `loomdb_areas`. None: a backend without one (hooks as first seen)."""
        return None

    def settle(self) -> None:
        """Bring the query planner up to date after a bulk write (an import of many
        messages, a copy): PostgreSQL plans a path's walk from table statistics, and
        a table filled in one go and not yet analyzed (autovacuum comes up to a
        minute later) is walked by a plan that takes seconds instead of milliseconds.
        Nothing by default (SQLite's planner works from its indexes)."""
        return None

    def transaction(self) -> AbstractContextManager[None]:
        """One atomic write: commit on success, roll back on any exception. Re-entrant:
        a transaction opened inside another joins it, and only the outermost commits."""
        return Transaction(self.runner)

    def committed(self) -> bool:
        """True when the calling thread has no transaction open (what it wrote is durable
        and visible to every other thread)."""
        return self.runner._local.depth == 0

    def on_primary(self) -> AbstractContextManager[None]:
        """Reads of the calling thread inside the block come from the primary, never a
        standby (PostgreSQL with replicas; elsewhere there is only one server)."""
        return self.runner.on_primary()

    def close(self) -> None:
        """Release connections."""
        self.runner.close()

    def execute(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement (`?` placeholders in every dialect) inside the calling
        thread's transaction; its rows, or none. Areas' SQL and tests' tampering go
        through it."""
        return self.runner.execute(sql, args)
