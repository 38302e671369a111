"""Provenance: generation records and compaction records, as typed rows, with SQL
written once for both dialects."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TypedDict, cast

from .rows import bytes_to_hex, hex_to_bytes
from .runner import SqlRunner


class Generation(TypedDict):
    """One model call: JSON fields as stored text, `response_hash` as `sha256:<hex>`."""

    id: str
    tree_id: str
    created_at: str
    provider: str
    model: str
    request: str
    provider_request: str
    raw_response: str
    response_hash: str
    usage: str | None
    latency_ms: int | None
    status: str


class Compaction(TypedDict):
    """One compaction: how much it saved and what it summarized."""

    node_id: str
    tree_id: str
    model: str
    tokens_before: int
    tokens_after: int
    duration_ms: int
    trigger: str
    summarized: int
    created_at: str


GENERATION_COLUMNS = tuple(Generation.__annotations__)
COMPACTION_COLUMNS = tuple(Compaction.__annotations__)


class ProvenanceStore(ABC):
    """Where nodes came from: model calls and compactions."""

    @abstractmethod
    def insert_generation(self, gen: Generation) -> None:
        """Store one generation record."""

    @abstractmethod
    def get_generation(self, gen_id: str) -> Generation | None:
        """A generation record, or None."""

    @abstractmethod
    def insert_compaction(self, row: Compaction) -> None:
        """Store one compaction record."""

    @abstractmethod
    def get_compaction(self, node_id: str) -> Compaction | None:
        """The compaction that wrote a summary node, or None."""


def _insert(table: str, columns: tuple[str, ...]) -> str:
    return (f"INSERT INTO {table} ({', '.join(columns)})"
            f" VALUES ({', '.join('?' * len(columns))})")


_INSERT_GENERATION = _insert("generations", GENERATION_COLUMNS)
_INSERT_COMPACTION = _insert("compactions", COMPACTION_COLUMNS)


class ProvenanceSQL(ProvenanceStore):
    """`ProvenanceStore` over shared SQL."""

    def __init__(self, sql: SqlRunner) -> None:
        self.sql = sql

    def insert_generation(self, gen: Generation) -> None:
        values = [gen[k] for k in GENERATION_COLUMNS]  # type: ignore[literal-required]
        values[GENERATION_COLUMNS.index("response_hash")] = hex_to_bytes(gen["response_hash"])
        self.sql.q_run(_INSERT_GENERATION, values)

    def get_generation(self, gen_id: str) -> Generation | None:
        row = self.sql.q_one(
            f"SELECT {', '.join(GENERATION_COLUMNS)} FROM generations WHERE id = ?", (gen_id,))
        if row is None:
            return None
        out = dict(zip(GENERATION_COLUMNS, row, strict=True))
        out["response_hash"] = bytes_to_hex(out["response_hash"])
        return cast(Generation, out)

    def insert_compaction(self, row: Compaction) -> None:
        self.sql.q_run(_INSERT_COMPACTION, [row[k] for k in COMPACTION_COLUMNS])  # type: ignore[literal-required]

    def get_compaction(self, node_id: str) -> Compaction | None:
        row = self.sql.q_one(
            f"SELECT {', '.join(COMPACTION_COLUMNS)} FROM compactions WHERE node_id = ?",
            (node_id,))
        return None if row is None else cast(Compaction, dict(zip(COMPACTION_COLUMNS, row,
                                                                   strict=True)))
