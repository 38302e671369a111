"""Search: full text, semantic and hybrid, one results contract on both backends.

`{"entity", "kind", "tree"?, "snippet", "marks", "score"}` per hit, best first, whatever
the mode; a message hit also says where it sits (`role`, `created_at`, `side`, `leaf`:
see `places`, added for what the caller sees by the front door).

* Full text (`mode="text"`): a query is its words, all required, stemmed (FTS5 porter
  on SQLite, the `english` configuration on PostgreSQL); punctuation never reaches
  either query language, so any input is safe. A snippet is plain text; `marks` are
  its matches, `[start, end]` in characters (code points), written by the backends
  between two control characters that no indexed text holds (`storage.MARKS`), so a
  bracket or any other character in the content is never taken for a marker.
  Scores are higher-is-better on both backends (negated bm25 on SQLite; on PostgreSQL
  RUM's rank where the `rum` extension is installed, see chunks.py, else
  ts_rank_cd): they order hits, they do not compare across backends.
* Semantic (`mode="semantic"`): entries ranked by the cosine similarity of their
  embedding to the query's (see `loomdb.search.semantic`); the score is that
  similarity, the snippet the entry's opening. Entries are embedded behind the
  writes (the embedding worker, `loomdb search --reindex`), never inside a query,
  which embeds only its own text: it ranks what is embedded and says how many
  entries are not yet (`Hits.pending`); a hybrid query's full text covers those.
* Hybrid (`mode="hybrid"`): reciprocal rank fusion of both rankings, score
  `sum(1 / (RRF_K + rank))` over the rankings a hit is in (rank from 1), with
  RRF_K = 60 (the semantic ranking taken as deep as the hits wanted, the full-text
  one at least 50 deep); the snippet is the full-text one when the words matched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import addresses
from ..errors import InvalidInput, check_choice
from . import SEARCH, chunks
from . import dialects as D
from .index import catch_up
from .storage import MARKS, Scope

if TYPE_CHECKING:
    from ..loom import Loom

KINDS = ("message", "document", "item")
MODES = ("text", "semantic", "hybrid")
#: the most hits one search answers
MAX_LIMIT = 1000
#: the constant of reciprocal rank fusion (the value its authors found robust)
RRF_K = 60
_WORD = re.compile(r"\w+", re.UNICODE)


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


class Hits(list[dict[str, Any]]):
    """Hits, best first; `pending`: with a semantic or hybrid query, how many entries
    are not embedded yet (not ranked by meaning; full text finds them), else None."""

    pending: int | None = None

    @classmethod
    def of(cls, hits: list[dict[str, Any]], pending: int | None) -> Hits:
        out = cls(hits)
        out.pending = pending
        return out

    def answer(self) -> dict[str, Any]:
        """`{"hits": [...], "pending"?: N}`: the CLI's `--json`, HTTP's and MCP's shape."""
        return {"hits": list(self)} if self.pending is None else {"hits": list(self),
                                                                  "pending": self.pending}


def search(loom: Loom, q: Query, scope: Scope | None = None) -> Hits:
    """Hits for a query, best first; nodes written since the last search are indexed
    for full text first, so an import is searchable right away. With `scope` (a
    user's), only the entries it holds are ranked, in the query itself: a user gets a
    full page of their own hits however many of anyone else's rank higher."""
    check_choice("mode", q.mode, MODES)
    if q.kind is not None:
        check_choice("--kind", q.kind, KINDS)
    if not 1 <= q.limit <= MAX_LIMIT:
        raise InvalidInput("--limit", f"must be between 1 and {MAX_LIMIT}")
    found = words(q.text)
    tree = loom.tree(q.tree).id if q.tree else None
    fetch = q.limit if q.tag is None else min(q.limit * 20, 5000)
    pending = None
    if q.mode == "text":
        catch_up(loom)
        hits = [_hit(r) for r in _text(loom, found, q, tree, fetch, scope)]
    elif q.mode == "semantic":
        ranked, pending = _semantic(loom, q, tree, fetch, scope)
        hits = [_hit(r) for r in ranked]
    else:
        ranked, pending = _semantic(loom, q, tree, fetch, scope)
        hits = fuse([_hit(r) for r in ranked],
                    [_hit(r) for r in _text(loom, found, q, tree, max(fetch, 50), scope)])
    if q.tag is not None:
        hits = [h for h in hits if q.tag in addresses.tags(loom, h["kind"], h["entity"])]
    # how much is not embedded yet counts the whole store's entries: said to the
    # operator only (a user's count would tell how much others wrote lately)
    return Hits.of(hits[: q.limit], pending if scope is None else None)


def fuse(semantic: list[dict[str, Any]], text: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Reciprocal rank fusion of two rankings (see the module docstring)."""
    fused: dict[str, dict[str, Any]] = {}
    for ranking in (semantic, text):
        for rank, hit in enumerate(ranking, start=1):
            into = fused.setdefault(hit["entity"], {**hit, "score": 0.0})
            into["score"] += 1 / (RRF_K + rank)
            if ranking is text:
                into["snippet"], into["marks"] = hit["snippet"], hit["marks"]
    return sorted(fused.values(), key=lambda h: -h["score"])


def _semantic(loom: Loom, q: Query, tree: str | None, limit: int,
              scope: Scope | None) -> tuple[list[tuple[Any, ...]], int]:
    """The ranking over what is embedded, and how many entries are not yet: only the
    query's own text is embedded here (the full-text catch-up runs first)."""
    from .semantic import index as V
    from .semantic import model, rank

    pending = V.prepare_query(loom)
    filters = {c: v for c, v in (("tree_id", tree), ("role", q.role), ("author", q.author),
                                 ("kind", q.kind)) if v is not None}
    vector = model.embed([q.text], threads=loom.settings.model_threads)[0]
    return rank.nearest(loom, vector, filters, limit, scope), pending


def reindex(loom: Loom, everything: bool = False) -> int:
    """Embed the entries not embedded yet, in batches (`everything`: every entry
    again, to repair); how many."""
    from .semantic import index as V

    return V.reindex(loom) if everything else V.catch_up(loom)


def status(loom: Loom) -> dict[str, int]:
    """`{"embedded", "total", "pending"}` (see `semantic.index.status`)."""
    from .semantic import index as V

    return V.status(loom)


def _text(loom: Loom, found: list[str], q: Query, tree: str | None,
          limit: int, scope: Scope | None) -> list[tuple[Any, ...]]:
    with loom.unit(SEARCH) as db:
        tables = chunks.chunk_tables(db) if chunks.ranked(loom, db) else None
        return D.storage(db).query(db, found, q, tree, limit, tables, scope)


def _hit(row: tuple[Any, ...]) -> dict[str, Any]:
    entity, kind, tree, snippet, score = row
    hit: dict[str, Any] = {"entity": entity, "kind": kind}
    if tree is not None:
        hit["tree"] = tree
    hit["snippet"], hit["marks"] = marked(snippet or "")
    hit["score"] = float(score)
    return hit


def marked(snippet: str) -> tuple[str, list[list[int]]]:
    """A snippet as the backends write it → its plain text and its matches' spans."""
    start, stop = MARKS
    text: list[str] = []
    marks: list[list[int]] = []
    at, opened = 0, None
    for part in re.split(f"([{start}{stop}])", snippet):
        if part == start:
            opened = at
        elif part == stop:
            if opened is not None and at > opened:
                marks.append([opened, at])
            opened = None
        else:
            text.append(part)
            at += len(part)
    return "".join(text), marks
