"""Forgetting on PostgreSQL: contents live in `contents`, one row per content id.

A content goes with the last node holding it (a document revision naming it has been
given its own copy first, by the caller). Deleted and updated rows leave dead tuples
until a vacuum: `scrub` vacuums the tables a forget touches, after the commit (VACUUM
cannot run inside a transaction). A plain VACUUM makes the space reusable; the bytes
stay in the data files until overwritten, and `VACUUM FULL` rewrites the tables
(docs/forget.md says when that is needed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..forget import TOMBSTONE, ForgetStore
from ..nodes import REDACTED_COPY
from ..rows import bytes_to_hex, hex_to_bytes

#: the core tables a forget deletes from or rewrites (areas add their own)
TABLES = ("nodes", "contents", "generations", "node_sources", "node_selections", "edges",
          "edge_sources", "node_meta", "node_tags", "trees", "drafts", "refs",
          "ref_selections", "stale", "scrubs", "node_scrubs")


class PostgresForget(ForgetStore):
    """See the module docstring."""

    dialect = "postgres"

    #: extra tables to vacuum (area tables the caller touched)
    also: tuple[str, ...] = ()

    def begin(self) -> None:
        """Hold off every write of nodes until this forget commits (reads go on): an
        append after a node being deleted would otherwise commit a child whose parent
        is gone. Taken first, so what the forget reads next is all there is."""
        self._run("LOCK TABLE nodes IN SHARE ROW EXCLUSIVE MODE")

    def stored_contents(self, content_ids: Sequence[str]) -> set[str]:
        rows = self._run("SELECT id FROM contents WHERE id = ANY(?::bytea[])",
                         ([hex_to_bytes(c) for c in content_ids],))
        return {bytes_to_hex(r[0]) for r in rows}

    def bodies_with_blobs(self, ids: Sequence[str]) -> dict[str, str]:
        rows = self._run(
            "SELECT DISTINCT c.id, c.body FROM nodes n JOIN contents c ON c.id = n.content_id"
            f" WHERE n.id = ANY(?::text[]) AND n.flags & {REDACTED_COPY} = 0"
            " AND c.body LIKE '%\"ref\"%'", (list(ids),))
        return {bytes_to_hex(r[0]): r[1] for r in rows}

    def blob_used(self, blob_id: str) -> bool:
        return bool(self._run("SELECT 1 FROM contents WHERE body LIKE ? LIMIT 1",
                              (f"%{blob_id}%",)))

    def delete_nodes(self, ids: Sequence[str]) -> None:
        rows = self._run("DELETE FROM nodes WHERE id = ANY(?::text[]) RETURNING content_id",
                         (list(ids),))
        self._drop_unused(rows)

    def redact_copies(self, ids: Sequence[str]) -> None:
        rows = self._run(f"UPDATE nodes SET flags = flags | {REDACTED_COPY}"
                         " WHERE id = ANY(?::text[]) RETURNING content_id", (list(ids),))
        self._drop_unused(rows)

    def _drop_unused(self, rows: list[tuple[Any, ...]]) -> None:
        """The contents of `rows` (content ids) no node reads any more: gone (a copy its
        owner redacted reads the tombstone, not its row)."""
        cids = list({bytes(r[0]) for r in rows})
        if cids:
            self._run("DELETE FROM contents c WHERE c.id = ANY(?::bytea[]) AND NOT EXISTS"
                      " (SELECT 1 FROM nodes n WHERE n.content_id = c.id"
                      f" AND n.flags & {REDACTED_COPY} = 0)", (cids,))

    find = "strpos"

    def redact_content(self, content_id: str) -> None:
        self.set_body(content_id, TOMBSTONE)

    def set_body(self, content_id: str, body: str) -> None:
        self._run("UPDATE contents SET body = ? WHERE id = ?", (body, hex_to_bytes(content_id)))

    def span_contents(self, trees: Sequence[str] | None, needles: Sequence[str] | None
                      ) -> dict[str, tuple[str, list[tuple[str, str]]]]:
        cond, args = self._holding(("c.body",), needles)
        if trees is None:
            rows = self._run(f"SELECT c.id, c.body FROM contents c WHERE 1 = 1{cond}", args)
        else:
            rows = self._run(
                "SELECT DISTINCT c.id, c.body FROM nodes n JOIN contents c ON c.id = n.content_id"
                f" WHERE n.tree_id = ANY(?::text[]) AND n.flags & {REDACTED_COPY} = 0{cond}",
                [list(trees), *args])
        out: dict[str, tuple[str, list[tuple[str, str]]]] = {
            bytes_to_hex(r[0]): (r[1], []) for r in rows}
        if out:
            for nid, tid, cid in self._run(
                    "SELECT id, tree_id, content_id FROM nodes WHERE content_id = ANY(?::bytea[])"
                    f" AND flags & {REDACTED_COPY} = 0",
                    ([hex_to_bytes(c) for c in out],)):
                out[bytes_to_hex(cid)][1].append((nid, tid))
        return out

    def scrub(self, tables: Sequence[str] = (),
              needles: Sequence[bytes] = ()) -> dict[str, Any]:
        done = []
        for table in (*TABLES, *tables):
            if self._run("SELECT to_regclass(?)", (table,))[0][0] is not None:
                self._run(f"VACUUM {table}")
                done.append(table)
        return {"vacuumed": done}
