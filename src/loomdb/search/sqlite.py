"""The search area's SQLite storage: entries with the filter columns, their words in an
FTS5 table (`search_text`, porter stemming) keyed by the entry's seq."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..store.areas import Unit
from .storage import ROWS, Entry, Hit, Scope, SharedSQL, clean, filters, marks

if TYPE_CHECKING:
    from .service import Query


class SQLiteSearch(SharedSQL):
    chunked = False

    def queued(self, db: Unit, n: int) -> list[tuple[int, str]]:
        # (writers are serialized: no other indexer holds these rows)
        return [(int(s), str(i)) for s, i in db.execute(
            "SELECT seq, node_id FROM search_pending ORDER BY seq LIMIT ?", (n,))]

    def insert(self, db: Unit, entries: Sequence[Entry]) -> None:
        for i in range(0, len(entries), ROWS):
            part = clean(entries[i:i + ROWS])
            rows = db.execute("INSERT INTO search_entries (entity, kind, tree_id, role, author) "
                              "VALUES " + ",".join(["(?, ?, ?, ?, ?)"] * len(part))
                              + " RETURNING seq, entity", [v for row in part for v in row[:5]])
            seq = {entity: s for s, entity in rows}
            args: list[Any] = []
            for row in part:
                args += [seq[row[0]], row[5]]
            db.execute("INSERT INTO search_text (rowid, body) VALUES "
                       + ",".join(["(?, ?)"] * len(part)), args)

    def delete(self, db: Unit, entities: Sequence[str]) -> None:
        for i in range(0, len(entities), 500):
            part = list(entities[i:i + 500])
            db.execute("DELETE FROM search_text WHERE rowid IN (SELECT seq FROM search_entries "
                       f"WHERE entity IN ({marks(len(part))}))", part)
            db.execute(f"DELETE FROM search_entries WHERE entity IN ({marks(len(part))})", part)

    def forget_nodes(self, db: Unit, ids: Sequence[str]) -> None:
        if not ids:
            return
        self.delete(db, ids)
        self._delete_entries(db, "node_id", "search_pending", ids)
        # the full-text index keeps deleted words in its segments until they are
        # merged: merge them now, in this transaction (freed pages zeroed)
        db.execute("INSERT INTO search_text (search_text) VALUES ('optimize')")

    def query(self, db: Unit, words: list[str], q: Query, tree: str | None, limit: int,
              tables: list[str] | None, scope: Scope | None = None) -> list[Hit]:
        where, args = filters(q, tree, "e")
        if scope is not None:
            seen, values = scoped(scope, "e")
            where, args = where + seen, [*args, *values]
        match = " ".join('"' + w.replace('"', "") + '"' for w in words)
        sql = ("SELECT e.entity, e.kind, e.tree_id, snippet(search_text, 0, char(2), char(3), '…', 12), "
               "-bm25(search_text) FROM search_text JOIN search_entries e "
               "ON e.seq = search_text.rowid WHERE search_text MATCH ?" + where +
               " ORDER BY bm25(search_text) LIMIT ?")
        return db.execute(sql, [match, *args, limit])


def scoped(scope: Scope, alias: str) -> tuple[str, list[Any]]:
    """` AND` the entry is one `scope` holds: a message in one of its trees, a revision
    of one of its documents, an item of one of its collections (each list one JSON
    parameter, however long)."""
    import json

    e = alias
    return ((f" AND ({e}.tree_id IN (SELECT value FROM json_each(?))"
             f" OR ({e}.kind = 'document' AND substr({e}.entity, 5, "
             f"instr(substr({e}.entity, 5) || '@', '@') - 1) IN (SELECT value FROM json_each(?)))"
             f" OR ({e}.kind = 'item' AND substr({e}.entity, 6, "
             f"instr(substr({e}.entity, 6) || '/', '/') - 1) IN (SELECT value FROM json_each(?))))"),
            [json.dumps(sorted(s)) for s in (scope.trees, scope.documents, scope.collections)])


STORAGE = SQLiteSearch()
