"""Writing vectors: entries queued by a trigger (see the migrations) are embedded in
batches behind the writes, never on the append path and never inside a query: by the
embedding worker (`worker.py`, in `loomdb serve`, `watch` and `gateway`) or by
`loomdb search --reindex` (`catch_up`). A semantic query ranks what is embedded and
says how many entries are not yet (`pending`). Embedding runs outside any transaction;
the vectors of a batch are then written in one, for the queued entries that are still
there.

Every vector carries the id of the model that made it (`model.MODEL_ID`). The first
semantic query of a handle, and every catch-up, looks for vectors of another model
(two probes of an index) and queues their entries again: a store embedded by an older
model is re-embedded behind the writes once the new one runs, and until then the old
vectors still rank."""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...errors import InvalidInput, MissingExtra
from ...store.areas import Unit
from .. import SEARCH
from .. import index as text_index
from . import SEMANTIC
from . import storage as V
from .model import MAX_CHARS, MODEL_ID, embed
from .storage import VECTOR_LOCK

if TYPE_CHECKING:
    import numpy as np

    from ...loom import Loom

__all__ = ["VECTOR_LOCK", "backlog", "catch_up", "embed_batch", "forget_vectors", "pending",
           "prepare_query", "reindex", "requeue_other_models", "status"]

_BATCH = 256


def pending(db: Unit, n: int) -> list[tuple[int, str]]:
    """Up to `n` queued entries, (seq, text), oldest first."""
    seqs = [int(r[0]) for r in db.execute(
        "SELECT seq FROM search_vec_pending ORDER BY seq LIMIT ?", (n,))]
    if not seqs:
        return []
    body = V.of(db).texts(db, seqs, MAX_CHARS)
    return [(s, body.get(s, "")) for s in seqs]


def catch_up(loom: Loom) -> int:
    """Index new messages for full text, then embed every queued entry, a batch at a
    time; how many (`loomdb search --reindex`, and the worker's drain)."""
    done = 0
    while True:
        n = embed_batch(loom)
        if not n:
            return done
        done += n


def embed_batch(loom: Loom, n: int = _BATCH) -> int:
    """Index new messages for full text, then embed up to `n` queued entries; how many
    (0: nothing was queued). Vectors another model made are queued again once per handle."""
    prepare_query(loom)
    with loom.unit(SEMANTIC) as db:
        rows = pending(db, n)
    if not rows:
        return 0
    vectors = embed([r[1] for r in rows], threads=loom.settings.model_threads)
    with loom.unit(SEMANTIC) as db:
        _store(db, [r[0] for r in rows], vectors)
    return len(rows)


def prepare_query(loom: Loom) -> int:
    """What a semantic query does before it ranks, in place of embedding: new messages
    indexed for full text (cheap), other models' vectors queued again (once per handle),
    deleted entries' vec0 rows dropped; how many entries are not embedded yet."""
    text_index.catch_up(loom)
    if loom not in _requeued:
        requeue_other_models(loom)
        _requeued.add(loom)
    with loom.unit(SEMANTIC) as db:  # one transaction for a query's usual nothing-to-do
        V.of(db).drop_gone(db)
        return backlog(db)


def backlog(db: Unit) -> int:
    """How many entries wait to be embedded."""
    return _count(db, "search_vec_pending")


def _count(db: Unit, table: str) -> int:
    found = db.one(f"SELECT count(*) FROM {table}")
    return int(found[0]) if found else 0


def status(loom: Loom) -> dict[str, int]:
    """`{"embedded", "total", "pending"}`: vectors written, entries indexed (and nodes
    waiting to be, which the worker indexes first), and those not embedded yet. Reads
    only: nothing is indexed or embedded; a store without the semantic area has
    embedded nothing (every entry pending)."""
    with loom.unit(SEARCH) as db:
        entries, queued = _count(db, "search_entries"), _count(db, "search_pending")
    if not loom.has_area(SEMANTIC):
        return {"embedded": 0, "total": entries + queued, "pending": entries + queued}
    with loom.unit(SEMANTIC) as db:
        waiting = backlog(db)
        embedded = _count(db, "search_vectors")
    return {"embedded": embedded, "total": entries + queued, "pending": waiting + queued}


def forget_vectors(loom: Loom) -> dict[str, str] | None:
    """Drop the vectors of the entries a forget just deleted, in its transaction (a
    backup taken after it returns holds none): PostgreSQL's went with their entries (a
    cascade); SQLite's vec0 rows are deleted here, which needs sqlite-vec on this
    connection. None when done; else why not (they then go at the next semantic query)."""
    if not loom.has_area(SEMANTIC):
        return None
    try:
        with loom.unit(SEMANTIC) as db:  # (its extension is loaded before the unit opens)
            V.of(db).drop_gone(db)
    except (MissingExtra, InvalidInput) as exc:
        return {"vectors": f"kept until the next semantic query ({exc})"}
    return None


#: the handles whose store was checked for other models' vectors (see `catch_up`)
_requeued: weakref.WeakSet[Loom] = weakref.WeakSet()


def reindex(loom: Loom) -> int:
    """Embed every entry again (to repair); how many."""
    text_index.catch_up(loom)
    with loom.unit(SEMANTIC) as db:
        V.of(db).clear(db)
        db.execute("INSERT INTO search_vec_pending (seq) SELECT seq FROM search_entries WHERE true "
                   "ON CONFLICT DO NOTHING")
    return catch_up(loom)


def requeue_other_models(loom: Loom, model: str = MODEL_ID) -> int:
    """Queue again the entries whose vectors another model made; how many. Cheap when
    there are none: `model < ?` and `model > ?` are each one probe of an index."""
    with loom.unit(SEMANTIC) as db:
        if (db.one("SELECT 1 FROM search_vectors WHERE model < ? LIMIT 1", (model,)) is None
                and db.one("SELECT 1 FROM search_vectors WHERE model > ? LIMIT 1",
                           (model,)) is None):
            return 0
        stale = "SELECT seq FROM search_vectors WHERE model < ? OR model > ?"
        n = db.one(f"SELECT count(*) FROM ({stale}) s", (model, model))
        db.execute(f"INSERT INTO search_vec_pending (seq) {stale} ON CONFLICT DO NOTHING",
                   (model, model))
        return int(n[0]) if n else 0


def _store(db: Unit, seqs: Sequence[int], vectors: np.ndarray) -> None:
    marks = ",".join("?" * len(seqs))
    queued = {int(r[0]) for r in db.execute(
        f"SELECT seq FROM search_vec_pending WHERE seq IN ({marks})", list(seqs))}
    rows = [(s, v.tobytes(), MODEL_ID) for s, v in zip(seqs, vectors, strict=True)
            if s in queued]
    if not rows:
        return
    db.execute(f"DELETE FROM search_vec_pending WHERE seq IN ({marks})", list(seqs))
    for i in range(0, len(rows), 200):
        V.of(db).store(db, rows[i:i + 200])
