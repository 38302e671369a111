"""The storage facade the Loom holds: one small interface per area, and transactions.

A backend stores rows and answers indexed queries; it knows nothing of headish names,
version selection, hashing rules or context. Those live above it (graph, refs,
context, verify) and are enforced once for all backends. A backend must run each
`transaction()` as one atomic unit that serializes writers (SQLite: BEGIN IMMEDIATE;
PostgreSQL: a transaction plus row locks), so a compare-and-swap inside it is exact.

One backend object is shared by every thread of a process. A transaction belongs to
the thread that opened it: it runs on that thread's own connection (SQLite: one per
thread; PostgreSQL: one borrowed from a pool for the transaction), so no thread ever
reads another's uncommitted rows, and `committed()` answers for the calling thread.

The areas and where their interfaces live:

    trees.TreeStore            trees                      SQL shared (TreeSQL)
    nodes.NodeStore            nodes, contents, walks     per dialect (hot paths)
    nodes.EdgeStore            annotation / link edges    per dialect (keys differ)
    overlay.MetaStore          bookmarks, flags, tags     SQL shared (MetaSQL)
    refs.RefStore              refs, selections, log      head per dialect, rest shared
    provenance.ProvenanceStore generations, compactions   SQL shared (ProvenanceSQL)
    drafts.DraftStore          buffer-mode drafts         SQL shared (DraftSQL)
    blobmeta.BlobMetaStore     blob size and type         SQL shared (BlobMetaSQL)

Shared SQL runs on `runner.SqlRunner` (`?` placeholders), which each backend
implements once. Areas beside the core (documents, search...) do not extend this
facade: they own their tables through `areas.Area` and `Loom.unit`.
"""

from __future__ import annotations

import threading
from abc import abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from .blobmeta import BlobMetaStore
from .drafts import DraftStore
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
from .trees import TreeStore

__all__ = [
    "BODY", "CACHE", "DEPTH", "FLAGS", "HAS_SELECTIONS", "HAS_SOURCES", "ID", "KIND",
    "OPTIONS", "PATH_COLUMNS", "ROLE", "SLOT", "Backend", "PathRow", "ThreadState",
]


class Backend(TreeStore, NodeStore, EdgeStore, MetaStore, RefStore, ProvenanceStore,
              DraftStore, BlobMetaStore):
    """Rows and indexed queries for one store; see the module docstring for the contract."""

    url: str
    #: `sqlite` or `postgres`: which migrations and area scripts a backend takes
    dialect: str

    # -- lifecycle -------------------------------------------------------------------
    @abstractmethod
    def migrate(self) -> list[str]:
        """Apply pending migrations in order; return the names applied (none when current)."""

    @abstractmethod
    def applied_migrations(self) -> list[str]:
        """Names of the migrations recorded as applied, oldest first."""

    #: per-thread state: the nesting depth of the thread's transaction (and, per
    #: backend, its connection); set by each backend's __init__
    _local: ThreadState

    def transaction(self) -> AbstractContextManager[None]:
        """One atomic write: commit on success, roll back on any exception. Re-entrant:
        a transaction opened inside another joins it, and only the outermost commits."""
        return _Transaction(self)

    @abstractmethod
    def _begin(self) -> None:
        """Begin a database transaction (the outermost of a nesting); when it raises,
        nothing is held."""

    @abstractmethod
    def _commit(self) -> None:
        """Commit it; on failure the transaction must be over (rolled back) when this raises."""

    @abstractmethod
    def _rollback(self, exc: BaseException) -> BaseException | None:
        """Roll it back because of `exc`; return an exception to raise instead, if any."""

    def committed(self) -> bool:
        """True when the calling thread has no transaction open (what it wrote is durable
        and visible to every other thread)."""
        return self._local.depth == 0

    def on_primary(self) -> AbstractContextManager[None]:
        """Reads of the calling thread inside the block come from the primary, never a
        standby (PostgreSQL with replicas; elsewhere there is only one server)."""
        return nullcontext()

    @abstractmethod
    def close(self) -> None:
        """Release connections."""

    @abstractmethod
    def execute(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement (`?` placeholders in every dialect) inside the calling
        thread's transaction; its rows, or none. Areas' SQL and tests' tampering go
        through it."""


class ThreadState(threading.local):
    """What a backend keeps per thread; backends subclass it to add their connection."""

    #: nesting depth of the thread's open transaction (0: none)
    depth: int = 0


class _Transaction:
    """`Backend.transaction()`: a plain context manager (appends open one each, so it is
    kept cheaper than a generator-based one). The outermost one of a thread begins and
    ends the database transaction; the backend's `_begin` serializes writers."""

    __slots__ = ("backend", "outermost")

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.outermost = False

    def __enter__(self) -> None:
        local = self.backend._local
        if local.depth:
            local.depth += 1
            return
        self.backend._begin()
        local.depth = 1
        self.outermost = True

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: object) -> None:
        backend = self.backend
        if not self.outermost:
            backend._local.depth -= 1
            return
        backend._local.depth = 0
        if exc is None:
            backend._commit()
            return
        instead = backend._rollback(exc)
        if instead is not None:
            raise instead from exc
