"""The few calls that SQL written once for both dialects runs on.

Shared SQL uses `?` placeholders and the syntax both SQLite and PostgreSQL accept
(`INSERT ... ON CONFLICT ... DO NOTHING / DO UPDATE`, `coalesce`, `ORDER BY ... LIMIT`).
Each backend implements these five methods once; an area's shared code (trees,
overlay, refs, provenance, blob metadata, drafts) is a mixin over them, and only the
genuinely different hot paths (node placement, walks) are written per dialect.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from typing import Any


class SqlRunner(ABC):
    """Run `?`-placeholder SQL on the calling thread's connection (or transaction)."""

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
