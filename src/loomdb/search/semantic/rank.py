"""Ranking entries by cosine similarity to a query vector, best first, with the same
filters as full text. Rows are `(entity, kind, tree, snippet, score)`; the score is the
cosine similarity (higher is better, at most 1); the snippet is the entry's opening.

SQLite ranks in SQL with sqlite-vec: an exact k-nearest scan of a vec0 table (cosine
distance, the filter columns stored beside the vectors and applied in the scan), the
file read memory-mapped. PostgreSQL
has no vector type here (Debian packages no pgvector for the server), so vectors are
bytea and ranked in the process: a per-store cache of the matrix and the filter
columns follows `vseq` (only new vectors are read), numpy scores it, and the best are
read back from the store, which drops entries deleted since they were cached.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any

from ...store.areas import Unit
from . import SEMANTIC
from .model import DIMS

if TYPE_CHECKING:
    import numpy as np

    from ...loom import Loom

Row = tuple[Any, ...]
_SNIPPET = 200
_FILTERS = ("tree_id", "role", "author", "kind")
_MAX_K = 4096  # sqlite-vec's largest k
#: SQLite: the scan reads the file memory-mapped (about twice as fast as through the
#: page cache for 100k vectors); set on the connections that run semantic queries
_MMAP = 1 << 30


def nearest(loom: Loom, vector: np.ndarray, filters: dict[str, str], n: int) -> list[Row]:
    """The `n` entries nearest `vector` that pass `filters` (column -> value)."""
    with loom.unit(SEMANTIC) as db:
        if db.dialect == "sqlite":
            return _sqlite(db, vector, filters, n)
        return _cache(loom).nearest(db, vector, filters, n)


def snippet(text: str) -> str:
    """The opening of a text on one line, cut at a word."""
    flat = " ".join((text or "").split())
    if len(flat) <= _SNIPPET:
        return flat
    cut = flat[:_SNIPPET].rsplit(" ", 1)[0]
    return cut + "…"


def _sqlite(db: Unit, vector: np.ndarray, filters: dict[str, str], n: int) -> list[Row]:
    """The k nearest by cosine in the vec0 table (exact; filters applied in the scan)."""
    db.execute(f"PRAGMA mmap_size = {_MMAP}")
    where = "".join(f" AND {c} = ?" for c in filters)
    nearest = ("SELECT seq, 1 - distance AS score FROM search_vec_index "
               f"WHERE embedding MATCH ? AND k = ?{where}")
    rows = db.execute(
        f"SELECT e.entity, e.kind, e.tree_id, substr(t.body, 1, {_SNIPPET * 2}), h.score "
        f"FROM ({nearest}) h JOIN search_entries e ON e.seq = h.seq "
        "JOIN search_text t ON t.rowid = h.seq ORDER BY h.score DESC",
        [vector.tobytes(), min(n, _MAX_K), *filters.values()])
    return [(*r[:3], snippet(r[3]), r[4]) for r in rows]


_caches: weakref.WeakKeyDictionary[Loom, _Cache] = weakref.WeakKeyDictionary()
_caches_lock = threading.Lock()


def _cache(loom: Loom) -> _Cache:
    with _caches_lock:
        found = _caches.get(loom)
        if found is None:
            found = _caches[loom] = _Cache()
        return found


class _Cache:
    """A store's vectors and filter columns in memory (PostgreSQL); see the module."""

    def __init__(self) -> None:
        import numpy as np

        self.lock = threading.Lock()
        self.vseq = 0
        self.seqs = np.empty(0, dtype=np.int64)
        self.matrix = np.empty((0, DIMS), dtype=np.float32)
        self.alive = np.empty(0, dtype=bool)
        self.columns = {c: np.empty(0, dtype=object) for c in _FILTERS}
        self.row: dict[int, int] = {}

    def nearest(self, db: Unit, vector: np.ndarray, filters: dict[str, str],
                n: int) -> list[Row]:
        import numpy as np

        with self.lock:
            self._refresh(db)
            while True:
                mask = self.alive.copy()
                for column, value in filters.items():
                    mask &= self.columns[column] == value
                scores = np.where(mask, self.matrix @ vector, -np.inf)
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
        found = {int(r[0]): r[1:] for r in db.execute(
            f"SELECT seq, entity, kind, tree_id, left(body, {_SNIPPET * 2}) "
            f"FROM search_entries WHERE seq IN ({','.join('?' * len(seqs))})", seqs)}
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
        import numpy as np

        latest = db.one("SELECT max(vseq) FROM search_vectors")
        if latest is None or latest[0] is None or int(latest[0]) <= self.vseq:
            return  # (one index probe: the join below may be planned as a full scan)
        rows = db.execute(
            "SELECT v.vseq, v.seq, v.embedding, e.tree_id, e.role, e.author, e.kind "
            "FROM search_vectors v JOIN search_entries e ON e.seq = v.seq "
            "WHERE v.vseq > ? ORDER BY v.vseq", (self.vseq,))
        if not rows:
            return
        self.vseq = int(rows[-1][0])
        new = [r for r in rows if int(r[1]) not in self.row]
        for r in rows:  # re-embedded entries are overwritten in place
            i = self.row.get(int(r[1]))
            if i is not None:
                self.matrix[i] = np.frombuffer(bytes(r[2]), dtype=np.float32)
                self.alive[i] = True
        if not new:
            return
        start = len(self.seqs)
        self.seqs = np.concatenate([self.seqs, np.array([int(r[1]) for r in new], np.int64)])
        block = np.frombuffer(b"".join(bytes(r[2]) for r in new), dtype=np.float32)
        self.matrix = np.concatenate([self.matrix, block.reshape(len(new), DIMS)])
        self.alive = np.concatenate([self.alive, np.ones(len(new), dtype=bool)])
        for j, column in enumerate(_FILTERS):
            values = np.empty(len(new), dtype=object)
            values[:] = [r[3 + j] for r in new]
            self.columns[column] = np.concatenate([self.columns[column], values])
        for j, r in enumerate(new):
            self.row[int(r[1])] = start + j
