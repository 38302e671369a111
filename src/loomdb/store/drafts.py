"""Draft storage for buffer mode: the working buffer of a session or view.

A draft is mutable state keyed by ref name (table `drafts`, migration 0003): it is not
part of any node, never hashed, and committing it writes an ordinary node. The two
mixins below are the backend halves of `Backend.get_draft` / `Backend.set_draft`
(`SQLiteBackend(DraftsSQLite, Backend)`, `PostgresBackend(DraftsPostgres, Backend)`);
`loomdb.buffer` is the only caller and runs them inside its own transactions.
"""

from __future__ import annotations

from typing import Any


class DraftsSQLite:
    """SQLite: writers already serialize on BEGIN IMMEDIATE, so a read-modify-write of a
    draft inside one transaction is exact."""

    _db: Any

    def get_draft(self, ref_name: str) -> str | None:
        row = self._db.execute(
            "SELECT text FROM drafts WHERE ref_name = ?", (ref_name,)
        ).fetchone()
        return None if row is None else str(row[0])

    def set_draft(self, ref_name: str, text: str, at: str) -> None:
        if text:
            self._db.execute(
                "INSERT INTO drafts (ref_name, text, updated_at) VALUES (?, ?, ?)"
                " ON CONFLICT (ref_name) DO UPDATE SET text = excluded.text,"
                " updated_at = excluded.updated_at",
                (ref_name, text, at),
            )
        else:
            self._db.execute("DELETE FROM drafts WHERE ref_name = ?", (ref_name,))


class DraftsPostgres:
    """PostgreSQL: reading a draft locks its ref's row (FOR UPDATE) so that two writers
    appending to the same draft inside transactions serialize instead of losing one."""

    _one: Any  # PostgresBackend's helpers
    _run: Any

    def get_draft(self, ref_name: str) -> str | None:
        row = self._one(
            "SELECT d.text FROM refs r LEFT JOIN drafts d ON d.ref_name = r.name"
            " WHERE r.name = %s FOR UPDATE OF r",
            (ref_name,),
        )
        if row is None:  # no such ref: a draft left behind by a deleted ref, if any
            row = self._one("SELECT text FROM drafts WHERE ref_name = %s", (ref_name,))
        return None if row is None or row[0] is None else str(row[0])

    def set_draft(self, ref_name: str, text: str, at: str) -> None:
        if text:
            self._run(
                "INSERT INTO drafts (ref_name, text, updated_at) VALUES (%s, %s, %s)"
                " ON CONFLICT (ref_name) DO UPDATE SET text = EXCLUDED.text,"
                " updated_at = EXCLUDED.updated_at",
                (ref_name, text, at),
            )
        else:
            self._run("DELETE FROM drafts WHERE ref_name = %s", (ref_name,))
