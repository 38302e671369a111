"""The runner: the one object per backend that holds its connections and runs SQL.

Every per-area store of a backend (`backend.trees`, `backend.nodes`, `backend.refs`...)
runs its statements through the backend's runner, so connections, transactions and
the read/write seams live in one place per dialect (`sqlite/connections.py`,
`postgres/connections.py`) and an area's store holds nothing but its SQL.

Shared SQL uses `?` placeholders and the syntax both SQLite and PostgreSQL accept
(`INSERT ... ON CONFLICT ... DO NOTHING / DO UPDATE`, `coalesce`, `ORDER BY ... LIMIT`);
each runner implements the five calls below once. A transaction belongs to the thread
that opened it and nests (only the outermost commits).
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any


class ThreadState(threading.local):
    """What a runner keeps per thread; runners subclass it to add their connection."""

    #: nesting depth of the thread's open transaction (0: none)
    depth: int = 0


class SqlRunner(ABC):
    """Run `?`-placeholder SQL on the calling thread's connection (or transaction)."""

    #: per-thread state: the nesting depth of the thread's transaction (and, per
    #: dialect, its connection); set by each runner's __init__
    _local: ThreadState

    @abstractmethod
    def q_all(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Every row of a query."""

    @abstractmethod
    def q_one(self, sql: str, args: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        """The first row of a query, or None."""

    @abstractmethod
    def q_run(self, sql: str, args: Sequence[Any] = ()) -> int:
        """Run a statement; the number of rows it changed."""

    @abstractmethod
    def q_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run a statement once per row of arguments."""

    @abstractmethod
    def ids_in(self, column: str, ids: Sequence[str]) -> Iterator[tuple[str, list[Any]]]:
        """(condition, args) pairs that together select `column` in `ids`: SQLite binds
        chunks of ids one parameter each, PostgreSQL one array per query."""

    @abstractmethod
    def execute(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement (`?` placeholders) inside the calling thread's transaction;
        its rows, or none."""

    # -- transactions ----------------------------------------------------------------
    def transaction(self) -> AbstractContextManager[None]:
        """One atomic write: commit on success, roll back on any exception. Re-entrant:
        a transaction opened inside another joins it, and only the outermost commits."""
        return Transaction(self)

    def committed(self) -> bool:
        """True when the calling thread has no transaction open."""
        return self._local.depth == 0

    def on_primary(self) -> AbstractContextManager[None]:
        """Reads of the calling thread inside the block come from the primary (only
        PostgreSQL with standbys has another place to read from)."""
        return nullcontext()

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

    @abstractmethod
    def close(self) -> None:
        """Release every connection."""


class Transaction:
    """`SqlRunner.transaction()`: a plain context manager (appends open one each, so it
    is kept cheaper than a generator-based one). The outermost one of a thread begins
    and ends the database transaction; the runner's `_begin` serializes writers."""

    __slots__ = ("outermost", "runner")

    def __init__(self, runner: SqlRunner) -> None:
        self.runner = runner
        self.outermost = False

    def __enter__(self) -> None:
        local = self.runner._local
        if local.depth:
            local.depth += 1
            return
        self.runner._begin()
        local.depth = 1
        self.outermost = True

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: object) -> None:
        runner = self.runner
        if not self.outermost:
            runner._local.depth -= 1
            return
        runner._local.depth = 0
        if exc is None:
            runner._commit()
            return
        instead = runner._rollback(exc)
        if instead is not None:
            raise instead from exc
