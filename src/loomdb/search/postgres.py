"""The search area's PostgreSQL storage: entries with their body and, without the
`rum` extension, a generated tsvector under a GIN index; with it, the words live in a
tail and RUM-indexed chunks (see chunks.py), filled by the entries' own triggers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..store.areas import Unit
from .storage import ROWS, Entry, Hit, Scope, SharedSQL, clean, filters

if TYPE_CHECKING:
    from .service import Query

_HEADLINE = ("StartSel=\x02, StopSel=\x03, MaxWords=18, MinWords=6, ShortWord=2, "
             "MaxFragments=1, FragmentDelimiter=…")
#: advisory lock key held while the index is given an area's entities (index.feed)
FEED_LOCK = 0x6C6F6F6D_66656564


class PostgresSearch(SharedSQL):
    chunked = True

    def queued(self, db: Unit, n: int) -> list[tuple[int, str]]:
        return [(int(s), str(i)) for s, i in db.execute(
            "SELECT seq, node_id FROM search_pending ORDER BY seq LIMIT ? "
            "FOR UPDATE SKIP LOCKED", (n,))]

    def insert(self, db: Unit, entries: Sequence[Entry]) -> None:
        for i in range(0, len(entries), ROWS):
            part = clean(entries[i:i + ROWS])
            db.execute("INSERT INTO search_entries (entity, kind, tree_id, role, author, body) "
                       "VALUES " + ",".join(["(?, ?, ?, ?, ?, ?)"] * len(part)),
                       [v for row in part for v in row])

    def delete(self, db: Unit, entities: Sequence[str]) -> None:
        self._delete_entries(db, "entity", "search_entries", entities)

    def forget_nodes(self, db: Unit, ids: Sequence[str]) -> None:
        self.delete(db, ids)
        self._delete_entries(db, "node_id", "search_pending", ids)

    def query(self, db: Unit, words: list[str], q: Query, tree: str | None, limit: int,
              tables: list[str] | None, scope: Scope | None = None) -> list[Hit]:
        sql, args = query(" ".join(words), q, tree, limit, tables, scope)
        return db.execute(sql, args)



def scoped(scope: Scope, alias: str, entity: str) -> tuple[str, list[Any]]:
    """` AND` the entry is one `scope` holds (see `storage.Scope`): `entity` is the SQL
    of the entry's entity (a chunk has none of its own: it is read from its entry)."""
    e = alias
    return ((f" AND ({e}.tree_id = ANY(?::text[])"
             f" OR ({e}.kind = 'document' AND split_part(substr({entity}, 5), '@', 1) "
             "= ANY(?::text[]))"
             f" OR ({e}.kind = 'item' AND split_part(substr({entity}, 6), '/', 1) "
             "= ANY(?::text[])))"),
            [sorted(scope.trees), sorted(scope.documents), sorted(scope.collections)])


def query(text: str, q: Query, tree: str | None, limit: int,
          tables: list[str] | None, scope: Scope | None = None) -> tuple[str, list[Any]]:
    """The PostgreSQL full-text query and its arguments.

    With `tables` (the tail and the chunks, see chunks.py), each hands over its best
    `limit` by RUM's rank (`<=>`, a distance: the chunks' RUM indexes return matches in
    that order and stop at the limit; the small tail is ranked by reading its matches),
    and the best of those win. The query is written inline at each use: the planner
    orders by an index only against a value it knows before the scan. Without them
    (no `rum` extension), `ts_rank_cd` scores every match a GIN index finds. Ties rank
    oldest first. With `scope`, only the entries it holds are matched and ranked."""
    where, args = filters(q, tree, "c")
    if scope is not None:
        entity = ("(SELECT x.entity FROM search_entries x WHERE x.seq = c.seq)"
                  if tables is not None else "c.entity")
        seen, values = scoped(scope, "c", entity)
        where, args = where + seen, [*args, *values]
    if tables is not None:
        tsq = "plainto_tsquery('english', ?)"
        parts = [f"(SELECT c.seq, c.tsv <=> {tsq} AS d FROM {t} c WHERE c.tsv @@ {tsq}"
                 f"{where} ORDER BY c.tsv <=> {tsq} LIMIT ?)" for t in tables]
        return ((f"SELECT e.entity, e.kind, e.tree_id, ts_headline('english', e.body, {tsq}, ?), "
                 "1 / h.d FROM (" + " UNION ALL ".join(parts) + ") h "
                 "JOIN search_entries e ON e.seq = h.seq ORDER BY h.d, h.seq LIMIT ?"),
                [text, _HEADLINE, *[text, text, *args, text, limit] * len(tables), limit])
    return (("WITH q AS (SELECT plainto_tsquery('english', ?) AS q), hits AS ("
             "SELECT c.entity, c.kind, c.tree_id, c.body, ts_rank_cd(c.tsv, q.q) AS score "
             "FROM search_entries c, q WHERE c.tsv @@ q.q" + where +
             " ORDER BY score DESC, c.seq LIMIT ?) "
             "SELECT h.entity, h.kind, h.tree_id, ts_headline('english', h.body, q.q, ?), "
             "h.score FROM hits h, q ORDER BY h.score DESC"),
            [text, *args, limit, _HEADLINE])


STORAGE = PostgresSearch()
