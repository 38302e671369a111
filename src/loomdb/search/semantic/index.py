"""Writing vectors: entries queued by a trigger (see the migrations) are embedded in
batches before a semantic query, never on the append path. Embedding runs outside any
transaction; the vectors of a batch are then written in one, for the queued entries
that are still there.

Every vector carries the id of the model that made it (`model.MODEL_ID`). Before it
embeds the queue, a semantic query looks for vectors of another model (two probes of
an index) and queues their entries again: a store embedded by an older model is
re-embedded by the first semantic query that runs the new one, and until then the
old vectors still rank (never a mix: the whole queue is embedded before ranking)."""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...store.areas import Unit
from .. import index as text_index
from . import SEMANTIC
from .model import MAX_CHARS, MODEL_ID, embed

if TYPE_CHECKING:
    import numpy as np

    from ...loom import Loom

_BATCH = 256
#: advisory lock key held by PostgreSQL writers of vectors, so `vseq` follows commits
VECTOR_LOCK = 0x6C6F6F6D_76656373

_BODIES = {
    "sqlite": "SELECT rowid, substr(body, 1, ?) FROM search_text WHERE rowid IN ({})",
    "postgres": "SELECT seq, left(body, ?) FROM search_entries WHERE seq IN ({})",
}


def pending(db: Unit, n: int) -> list[tuple[int, str]]:
    """Up to `n` queued entries, (seq, text), oldest first."""
    seqs = [int(r[0]) for r in db.execute(
        "SELECT seq FROM search_vec_pending ORDER BY seq LIMIT ?", (n,))]
    if not seqs:
        return []
    body = {int(r[0]): r[1] or "" for r in db.execute(
        _BODIES[db.dialect].format(",".join("?" * len(seqs))), [MAX_CHARS, *seqs])}
    return [(s, body.get(s, "")) for s in seqs]


def catch_up(loom: Loom) -> int:
    """Index new messages for full text, then embed every queued entry; how many.

    Vectors another model made are queued again once per handle (the first semantic
    query of a process re-embeds an upgraded store's; later queries skip the probe)."""
    text_index.catch_up(loom)
    _drop_gone(loom)
    if loom not in _requeued:
        requeue_other_models(loom)
        _requeued.add(loom)
    done = 0
    while True:
        with loom.unit(SEMANTIC) as db:
            rows = pending(db, _BATCH)
        if not rows:
            return done
        vectors = embed([r[1] for r in rows])
        with loom.unit(SEMANTIC) as db:
            _store(db, [r[0] for r in rows], vectors)
        done += len(rows)


#: the handles whose store was checked for other models' vectors (see `catch_up`)
_requeued: weakref.WeakSet[Loom] = weakref.WeakSet()


def reindex(loom: Loom) -> int:
    """Embed every entry again (after a model change, or to repair); how many."""
    text_index.catch_up(loom)
    with loom.unit(SEMANTIC) as db:
        db.execute("DELETE FROM search_vectors")
        if db.dialect == "sqlite":
            db.execute("DELETE FROM search_vec_index")
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


def _drop_gone(loom: Loom) -> None:
    """Drop the vec0 rows of deleted entries (SQLite; see the migration)."""
    with loom.unit(SEMANTIC) as db:
        if db.dialect != "sqlite" or db.one("SELECT 1 FROM search_vec_gone LIMIT 1") is None:
            return
        db.execute("DELETE FROM search_vec_index WHERE seq IN (SELECT seq FROM search_vec_gone)")
        db.execute("DELETE FROM search_vec_gone")


def _store(db: Unit, seqs: Sequence[int], vectors: np.ndarray) -> None:
    if db.dialect == "postgres":
        db.execute("SELECT pg_advisory_xact_lock(?)", (VECTOR_LOCK,))
    marks = ",".join("?" * len(seqs))
    queued = {int(r[0]) for r in db.execute(
        f"SELECT seq FROM search_vec_pending WHERE seq IN ({marks})", list(seqs))}
    rows = [(s, v.tobytes(), MODEL_ID) for s, v in zip(seqs, vectors, strict=True)
            if s in queued]
    if not rows:
        return
    db.execute(f"DELETE FROM search_vec_pending WHERE seq IN ({marks})", list(seqs))
    for i in range(0, len(rows), 200):
        part = rows[i:i + 200]
        args = [v for row in part for v in row]
        if db.dialect == "sqlite":
            last = db.execute("UPDATE search_vec_clock SET last = last + ? WHERE id = 1 "
                              "RETURNING last", (len(part),))[0][0]
            args = [v for i, (s, e, m) in enumerate(part)
                    for v in (s, int(last) - len(part) + 1 + i, e, m)]
            db.execute("INSERT OR REPLACE INTO search_vectors (seq, vseq, embedding, model) "
                       "VALUES " + ",".join(["(?, ?, ?, ?)"] * len(part)), args)
            _store_index(db, [row[0] for row in part])
            continue
        db.execute("INSERT INTO search_vectors (seq, vseq, embedding, model) VALUES "
                   + ",".join(["(?, nextval('search_vectors_vseq'), ?, ?)"] * len(part))
                   + " ON CONFLICT (seq) DO UPDATE SET vseq = excluded.vseq, "
                   "embedding = excluded.embedding, model = excluded.model", args)


def _store_index(db: Unit, seqs: Sequence[int]) -> None:
    marks = ",".join("?" * len(seqs))
    db.execute(f"DELETE FROM search_vec_index WHERE seq IN ({marks})", list(seqs))
    db.execute("INSERT INTO search_vec_index (seq, embedding, kind, tree_id, role, author) "
               "SELECT v.seq, v.embedding, e.kind, "
               "coalesce(e.tree_id, ''), coalesce(e.role, ''), coalesce(e.author, '') "
               "FROM search_vectors v JOIN search_entries e ON e.seq = v.seq "
               f"WHERE v.seq IN ({marks})", list(seqs))
