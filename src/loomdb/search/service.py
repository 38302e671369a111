"""Search: full text, semantic and hybrid, one results contract on both backends.

`{"entity", "kind", "tree"?, "snippet", "score"}` per hit, best first, whatever the mode.

* Full text (`mode="text"`): a query is its words, all required, stemmed (FTS5 porter
  on SQLite, the `english` configuration on PostgreSQL); punctuation never reaches
  either query language, so any input is safe. Snippets mark matches with [brackets].
  Scores are higher-is-better on both backends (negated bm25 on SQLite; on PostgreSQL
  RUM's rank where the `rum` extension is installed, see chunks.py, else
  ts_rank_cd): they order hits, they do not compare across backends.
* Semantic (`mode="semantic"`): entries ranked by the cosine similarity of their
  embedding to the query's (see `loomdb.search.semantic`); the score is that
  similarity, the snippet the entry's opening.
* Hybrid (`mode="hybrid"`): reciprocal rank fusion of both rankings, score
  `sum(1 / (RRF_K + rank))` over the rankings a hit is in (rank from 1), with
  RRF_K = 60 (the semantic ranking taken as deep as the hits wanted, the full-text
  one at least 50 deep); the snippet is the full-text one when the words matched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, check_choice
from ..store.areas import Unit
from . import SEARCH, chunks
from .index import catch_up

if TYPE_CHECKING:
    from ..loom import Loom

KINDS = ("message", "document", "item")
MODES = ("text", "semantic", "hybrid")
#: the most hits one search answers
MAX_LIMIT = 1000
#: the constant of reciprocal rank fusion (the value its authors found robust)
RRF_K = 60
_WORD = re.compile(r"\w+", re.UNICODE)
_HEADLINE = ("StartSel=[, StopSel=], MaxWords=18, MinWords=6, ShortWord=2, "
             "MaxFragments=1, FragmentDelimiter=…")


@dataclass(frozen=True)
class Query:
    text: str
    tree: str | None = None
    role: str | None = None
    author: str | None = None
    tag: str | None = None
    kind: str | None = None
    limit: int = 20
    mode: str = "text"


def words(text: str) -> list[str]:
    found = _WORD.findall(text or "")
    if not found:
        raise InvalidInput("search query", "has no words to look for")
    return found


def search(loom: Loom, q: Query) -> list[dict[str, Any]]:
    """Hits for a query, best first; nodes written since the last search are indexed
    first, so an import is searchable right away."""
    check_choice("mode", q.mode, MODES)
    if q.kind is not None:
        check_choice("--kind", q.kind, KINDS)
    if not 1 <= q.limit <= MAX_LIMIT:
        raise InvalidInput("--limit", f"must be between 1 and {MAX_LIMIT}")
    found = words(q.text)
    tree = loom.tree(q.tree).id if q.tree else None
    fetch = q.limit if q.tag is None else min(q.limit * 20, 5000)
    if q.mode == "text":
        catch_up(loom)
        hits = [_hit(r) for r in _text(loom, found, q, tree, fetch)]
    elif q.mode == "semantic":
        hits = [_hit(r) for r in _semantic(loom, q, tree, fetch)]
    else:
        hits = fuse([_hit(r) for r in _semantic(loom, q, tree, fetch)],
                    [_hit(r) for r in _text(loom, found, q, tree, max(fetch, 50))])
    if q.tag is not None:
        hits = [h for h in hits if q.tag in _tags(loom, h)]
    return hits[: q.limit]


def fuse(semantic: list[dict[str, Any]], text: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Reciprocal rank fusion of two rankings (see the module docstring)."""
    fused: dict[str, dict[str, Any]] = {}
    for ranking in (semantic, text):
        for rank, hit in enumerate(ranking, start=1):
            into = fused.setdefault(hit["entity"], {**hit, "score": 0.0})
            into["score"] += 1 / (RRF_K + rank)
            if ranking is text:
                into["snippet"] = hit["snippet"]
    return sorted(fused.values(), key=lambda h: -h["score"])


def _semantic(loom: Loom, q: Query, tree: str | None, limit: int) -> list[tuple[Any, ...]]:
    """Embeds what is queued (the full-text catch-up included), then ranks."""
    from .semantic import index as V
    from .semantic import model, rank

    V.catch_up(loom)
    filters = {c: v for c, v in (("tree_id", tree), ("role", q.role), ("author", q.author),
                                 ("kind", q.kind)) if v is not None}
    return rank.nearest(loom, model.embed([q.text])[0], filters, limit)


def reindex(loom: Loom) -> int:
    """Embed every entry again; how many."""
    from .semantic import index as V

    return V.reindex(loom)


def _text(loom: Loom, found: list[str], q: Query, tree: str | None,
          limit: int) -> list[tuple[Any, ...]]:
    with loom.unit(SEARCH) as db:
        tables = chunks.chunk_tables(db) if chunks.ranked(loom, db) else None
        return _query(db, found, q, tree, limit, tables)


def _query(db: Unit, found: list[str], q: Query, tree: str | None, limit: int,
           tables: list[str] | None) -> list[tuple[Any, ...]]:
    if db.dialect == "postgres":
        sql, args = postgres_query(" ".join(found), q, tree, limit, tables)
        return db.execute(sql, args)
    where, args = _filters(q, tree, "e")
    match = " ".join('"' + w.replace('"', "") + '"' for w in found)
    sql = ("SELECT e.entity, e.kind, e.tree_id, snippet(search_text, 0, '[', ']', '…', 12), "
           "-bm25(search_text) FROM search_text JOIN search_entries e ON e.seq = search_text.rowid "
           "WHERE search_text MATCH ?" + where + " ORDER BY bm25(search_text) LIMIT ?")
    return db.execute(sql, [match, *args, limit])


def postgres_query(text: str, q: Query, tree: str | None, limit: int,
                   tables: list[str] | None) -> tuple[str, list[Any]]:
    """The PostgreSQL full-text query and its arguments.

    With `tables` (the tail and the chunks, see chunks.py), each hands over its best
    `limit` by RUM's rank (`<=>`, a distance: the chunks' RUM indexes return matches in
    that order and stop at the limit; the small tail is ranked by reading its matches),
    and the best of those win. The query is written inline at each use: the planner
    orders by an index only against a value it knows before the scan. Without them
    (no `rum` extension), `ts_rank_cd` scores every match a GIN index finds. Ties rank
    oldest first."""
    where, args = _filters(q, tree, "c")
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


def _filters(q: Query, tree: str | None, alias: str) -> tuple[str, list[Any]]:
    where, args = "", []
    for column, value in (("tree_id", tree), ("role", q.role), ("author", q.author),
                          ("kind", q.kind)):
        if value is not None:
            where += f" AND {alias}.{column} = ?"
            args.append(value)
    return where, args


def _hit(row: tuple[Any, ...]) -> dict[str, Any]:
    entity, kind, tree, snippet, score = row
    hit: dict[str, Any] = {"entity": entity, "kind": kind}
    if tree is not None:
        hit["tree"] = tree
    hit["snippet"] = snippet
    hit["score"] = float(score)
    return hit


def _tags(loom: Loom, hit: dict[str, Any]) -> list[str]:
    if hit["kind"] == "message":
        return list(loom.meta(hit["entity"]).tags)
    if hit["kind"] == "item":
        from ..collections import service as K

        return K.item_tags(loom, hit["entity"].rpartition("/")[2])
    return []
