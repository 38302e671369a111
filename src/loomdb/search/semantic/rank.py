"""Ranking entries by cosine similarity to a query vector, best first, with the same
filters as full text. Rows are `(entity, kind, tree, snippet, score)`; the score is the
cosine similarity (higher is better, at most 1); the snippet is the entry's opening.

Both backends rank in the process: a per-store cache of the matrix and the filter
columns follows `vseq` (only vectors written since the last query are read), numpy
scores it (a 100k x 384 product is a few milliseconds, where a scan in the database
reads 150 MB), and the best are read back from the store, which drops entries
deleted since they were cached. PostgreSQL has no vector type here (Debian packages
no pgvector for the server), so its vectors are bytea.

SQLite also keeps the vectors in a sqlite-vec vec0 table, and the first semantic query
of a process is answered by its exact k-nearest scan (cosine distance, the filter
columns applied in the scan, the file read memory-mapped): a one-shot process such as
the CLI never loads the whole matrix, and a long-lived one (the server, a library
user) loads it at its second query and ranks in memory from then on.

A user's query (a `Scope`) ranks only the entries the user sees: the cache keeps each
entry's owner key (its tree, or its document's or collection's name) as a filter
column, so the scope is one more mask before the scores are ranked; such a query is
answered from the cache even when it is the process's first.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any

from ...store.areas import Unit
from ..storage import Scope, owner
from . import SEMANTIC
from . import storage as V
from .model import DIMS

if TYPE_CHECKING:
    import numpy as np

    from ...loom import Loom

Row = tuple[Any, ...]
_SNIPPET = 200
_FILTERS = ("tree_id", "role", "author", "kind")
#: the cache's column of owner keys (`storage.owner`), for a user's scope
_OWNER = "owner"


def nearest(loom: Loom, vector: np.ndarray, filters: dict[str, str], n: int,
            scope: Scope | None = None) -> list[Row]:
    """The `n` entries nearest `vector` that pass `filters` (column -> value), among
    those `scope` holds (None: all)."""
    with loom.unit(SEMANTIC) as db:
        cache = _cache(loom)
        store = V.of(db)
        if scope is None and store.scans and cache.first_query():
            return [(*r[:3], snippet(r[3]), r[4])
                    for r in store.scan(db, vector.tobytes(), filters, n)]
        return cache.nearest(db, vector, filters, n, scope)


def snippet(text: str) -> str:
    """The opening of a text on one line, cut at a word."""
    flat = " ".join((text or "").split())
    if len(flat) <= _SNIPPET:
        return flat
    cut = flat[:_SNIPPET].rsplit(" ", 1)[0]
    return cut + "…"


_caches: weakref.WeakKeyDictionary[Loom, _Cache] = weakref.WeakKeyDictionary()
_caches_lock = threading.Lock()


def _cache(loom: Loom) -> _Cache:
    with _caches_lock:
        found = _caches.get(loom)
        if found is None:
            found = _caches[loom] = _Cache()
        return found


class _Cache:
    """A store's vectors and filter columns in memory; see the module docstring.

    Rows are appended in `vseq` order into arrays that grow by doubling (a refresh
    copies only what is new); a filter column holds small integer codes, one per
    distinct value, so a filter is one comparison of integers."""

    def __init__(self) -> None:
        import numpy as np

        self.lock = threading.Lock()
        self.asked = False
        self.vseq = 0
        self.size = 0
        self.seqs = np.empty(0, dtype=np.int64)
        self.matrix = np.empty((0, DIMS), dtype=np.float32)
        self.alive = np.empty(0, dtype=bool)
        self.codes = {c: np.empty(0, dtype=np.int32) for c in (*_FILTERS, _OWNER)}
        self.names: dict[str, dict[Any, int]] = {c: {} for c in (*_FILTERS, _OWNER)}
        self.row: dict[int, int] = {}

    def first_query(self) -> bool:
        """True once: for the process's first query (answered without the cache)."""
        with self.lock:
            first, self.asked = not self.asked, True
        return first

    def nearest(self, db: Unit, vector: np.ndarray, filters: dict[str, str],
                n: int, scope: Scope | None = None) -> list[Row]:
        import numpy as np

        with self.lock:
            self._refresh(db)
            while True:
                size = self.size
                mask = self.alive[:size].copy()
                for column, value in filters.items():
                    code = self.names[column].get(value)
                    if code is None:
                        return []
                    mask &= self.codes[column][:size] == code
                if scope is not None:
                    known = self.names[_OWNER]
                    codes = [known[k] for k in scope.keys() if k in known]
                    mask &= np.isin(self.codes[_OWNER][:size], codes)
                scores = self.matrix[:size] @ vector
                scores[~mask] = -np.inf
                order = self._best(scores, n)
                hits = self._read(db, order, scores)
                if len(hits) >= n or len(hits) == len(order):  # enough, or all there is
                    return hits[:n]

    def _best(self, scores: np.ndarray, n: int) -> np.ndarray:
        import numpy as np

        finite = int(np.isfinite(scores).sum())
        k = min(max(n * 2, n + 10), finite)
        if k <= 0:
            return np.empty(0, dtype=np.int64)
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        top = top[np.isfinite(scores[top])]
        best: np.ndarray = top[np.argsort(-scores[top], kind="stable")]
        return best

    def _read(self, db: Unit, order: np.ndarray, scores: np.ndarray) -> list[Row]:
        if len(order) == 0:
            return []
        seqs = [int(self.seqs[i]) for i in order]
        found = V.of(db).openings(db, seqs)
        hits = []
        for i, seq in zip(order, seqs, strict=True):
            if seq not in found:
                self.alive[i] = False  # deleted since it was cached
                continue
            entity, kind, tree, body = found[seq]
            hits.append((entity, kind, tree, snippet(body), float(scores[i])))
        return hits

    def _refresh(self, db: Unit) -> None:
        """Read the vectors written since the last refresh (in `vseq` order)."""
        latest = db.one("SELECT max(vseq) FROM search_vectors")
        if latest is None or latest[0] is None or int(latest[0]) <= self.vseq:
            return  # (one index probe: the join below may be planned as a full scan)
        rows = db.execute(
            "SELECT v.vseq, v.seq, v.embedding, e.tree_id, e.role, e.author, e.kind, e.entity "
            "FROM search_vectors v JOIN search_entries e ON e.seq = v.seq "
            "WHERE v.vseq > ? ORDER BY v.vseq", (self.vseq,))
        if rows:
            self.vseq = int(rows[-1][0])
            self._put(rows)

    def _put(self, rows: list[tuple[Any, ...]]) -> None:
        """Write rows (vseq, seq, embedding, *filter values) into the arrays: over their
        old place when the entry is cached already (re-embedded, or a reused seq), else
        appended (one block copy for the matrix)."""
        import numpy as np

        fresh = [r for r in rows if int(r[1]) not in self.row]
        for r in rows:
            i = self.row.get(int(r[1]))
            if i is not None:
                self.matrix[i] = np.frombuffer(bytes(r[2]), dtype=np.float32)
                self._set(i, i + 1, [r])
        if not fresh:
            return
        start, end = self.size, self.size + len(fresh)
        self._grow(end)
        self.seqs[start:end] = [int(r[1]) for r in fresh]
        self.matrix[start:end] = np.frombuffer(
            b"".join(bytes(r[2]) for r in fresh), dtype=np.float32).reshape(len(fresh), DIMS)
        self._set(start, end, fresh)
        self.row.update((int(r[1]), start + j) for j, r in enumerate(fresh))
        self.size = end

    def _set(self, start: int, end: int, rows: list[tuple[Any, ...]]) -> None:
        """Mark rows start..end alive with their filter values' codes."""
        self.alive[start:end] = True
        for j, column in enumerate(_FILTERS):
            names = self.names[column]
            self.codes[column][start:end] = [names.setdefault(r[3 + j], len(names))
                                             for r in rows]
        names = self.names[_OWNER]
        self.codes[_OWNER][start:end] = [
            names.setdefault(owner(r[6], r[7], r[3]), len(names)) for r in rows]

    def _grow(self, need: int) -> None:
        import numpy as np

        have = len(self.seqs)
        if need <= have:
            return
        cap = max(need, have * 2, 1024)

        def grown(a: np.ndarray) -> np.ndarray:
            out = np.zeros((cap, *a.shape[1:]), dtype=a.dtype)
            out[: self.size] = a[: self.size]
            return out

        self.seqs, self.matrix, self.alive = (grown(self.seqs), grown(self.matrix),
                                              grown(self.alive))
        self.codes = {c: grown(a) for c, a in self.codes.items()}
