"""Draft storage for buffer mode: the working buffer of a session or view.

A draft is mutable state keyed by ref name (table `drafts`, migration 0003): it is not
part of any node, never hashed, and committing it writes an ordinary node.
`loomdb.buffer` is the only caller and runs these inside its own transactions.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from .runner import SqlRunner


class DraftStore(ABC):
    """Drafts by ref name."""

    @abstractmethod
    def get_draft(self, ref_name: str) -> str | None:
        """The working buffer (draft) of a session or view; None when it has none."""

    @abstractmethod
    def set_draft(self, ref_name: str, text: str, at: str) -> None:
        """Store a ref's draft (updated at `at`); an empty text removes it."""


class DraftSQL(DraftStore):
    """`DraftStore` over shared SQL. SQLite writers already serialize on BEGIN
    IMMEDIATE, so a read-modify-write of a draft inside one transaction is exact;
    PostgreSQL overrides `get_draft` to lock the ref's row."""

    def __init__(self, sql: SqlRunner) -> None:
        self.sql = sql

    def get_draft(self, ref_name: str) -> str | None:
        row = self.sql.q_one("SELECT text FROM drafts WHERE ref_name = ?", (ref_name,))
        return None if row is None else str(row[0])

    def set_draft(self, ref_name: str, text: str, at: str) -> None:
        if text:
            self.sql.q_run(
                "INSERT INTO drafts (ref_name, text, updated_at) VALUES (?, ?, ?)"
                " ON CONFLICT (ref_name) DO UPDATE SET text = excluded.text,"
                " updated_at = excluded.updated_at",
                (ref_name, text, at),
            )
        else:
            self.sql.q_run("DELETE FROM drafts WHERE ref_name = ?", (ref_name,))


class DraftsPostgres(DraftSQL):
    """PostgreSQL: reading a draft locks its ref's row (FOR UPDATE) so that two writers
    appending to the same draft inside transactions serialize instead of losing one."""

    def get_draft(self, ref_name: str) -> str | None:
        row = self.sql.q_one(
            "SELECT d.text FROM refs r LEFT JOIN drafts d ON d.ref_name = r.name"
            " WHERE r.name = ? FOR UPDATE OF r",
            (ref_name,),
        )
        if row is None:  # no such ref: a draft left behind by a deleted ref, if any
            return super().get_draft(ref_name)
        return None if row[0] is None else str(row[0])
