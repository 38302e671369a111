"""The semantic area's storage, one implementation per dialect (`of(db)`): the logic in
`index.py` and `rank.py` never asks which dialect it runs on.

SQLite keeps each vector twice: in `search_vectors` (the truth, numbered by
`search_vec_clock`) and in a sqlite-vec vec0 table that a process's first query scans;
its entries' text is in the FTS5 table. PostgreSQL keeps bytea vectors numbered by a
sequence under an advisory lock, and the text in the entries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ...store.areas import Unit

Row = tuple[Any, ...]
#: PostgreSQL writers of vectors hold this advisory lock, so `vseq` follows commits
VECTOR_LOCK = 0x6C6F6F6D_76656373
_SNIPPET_CHARS = 400
#: SQLite: the scan reads the file memory-mapped (about twice as fast as through the
#: page cache for 100k vectors); set on the connections that run semantic queries
_MMAP = 1 << 30
_MAX_K = 4096  # sqlite-vec's largest k


def _marks(n: int) -> str:
    return ",".join("?" * n)


class VectorStorage(Protocol):
    #: whether a process's first query is answered by a scan in the store (vec0)
    scans: bool

    def texts(self, db: Unit, seqs: Sequence[int], chars: int) -> dict[int, str]:
        """The opening `chars` of each entry's text."""

    def openings(self, db: Unit, seqs: Sequence[int]) -> dict[int, Row]:
        """seq -> (entity, kind, tree, opening) of the entries still there."""

    def clear(self, db: Unit) -> None:
        """Drop every vector (a reindex)."""

    def drop_gone(self, db: Unit) -> None:
        """Drop what deleted entries left behind that a trigger could not."""

    def store(self, db: Unit, rows: Sequence[tuple[int, bytes, str]]) -> None:
        """Write (seq, embedding, model) rows, each numbered by the next `vseq`."""

    def scan(self, db: Unit, vector: bytes, filters: dict[str, str], n: int) -> list[Row]:
        """The `n` nearest by cosine, (entity, kind, tree, opening, score), where the
        store can scan (`scans`)."""


class SQLiteVectors:
    scans = True

    def texts(self, db: Unit, seqs: Sequence[int], chars: int) -> dict[int, str]:
        return {int(r[0]): r[1] or "" for r in db.execute(
            f"SELECT rowid, substr(body, 1, ?) FROM search_text WHERE rowid IN "
            f"({_marks(len(seqs))})", [chars, *seqs])}

    def openings(self, db: Unit, seqs: Sequence[int]) -> dict[int, Row]:
        return {int(r[0]): r[1:] for r in db.execute(
            f"SELECT e.seq, e.entity, e.kind, e.tree_id, substr(t.body, 1, {_SNIPPET_CHARS}) "
            "FROM search_entries e JOIN search_text t ON t.rowid = e.seq "
            f"WHERE e.seq IN ({_marks(len(seqs))})", list(seqs))}

    def clear(self, db: Unit) -> None:
        db.execute("DELETE FROM search_vectors")
        db.execute("DELETE FROM search_vec_index")

    def drop_gone(self, db: Unit) -> None:
        """The vec0 rows of deleted entries (only a connection with sqlite-vec loaded
        may write a vec0 table, so the delete trigger lists them in search_vec_gone)."""
        if db.one("SELECT 1 FROM search_vec_gone LIMIT 1") is None:
            return
        db.execute("DELETE FROM search_vec_index WHERE seq IN (SELECT seq FROM search_vec_gone)")
        db.execute("DELETE FROM search_vec_gone")

    def store(self, db: Unit, rows: Sequence[tuple[int, bytes, str]]) -> None:
        last = db.execute("UPDATE search_vec_clock SET last = last + ? WHERE id = 1 "
                          "RETURNING last", (len(rows),))[0][0]
        args = [v for i, (s, e, m) in enumerate(rows)
                for v in (s, int(last) - len(rows) + 1 + i, e, m)]
        db.execute("INSERT OR REPLACE INTO search_vectors (seq, vseq, embedding, model) "
                   "VALUES " + ",".join(["(?, ?, ?, ?)"] * len(rows)), args)
        seqs = [row[0] for row in rows]
        marks = _marks(len(seqs))
        db.execute(f"DELETE FROM search_vec_index WHERE seq IN ({marks})", seqs)
        db.execute("INSERT INTO search_vec_index (seq, embedding, kind, tree_id, role, author) "
                   "SELECT v.seq, v.embedding, e.kind, "
                   "coalesce(e.tree_id, ''), coalesce(e.role, ''), coalesce(e.author, '') "
                   "FROM search_vectors v JOIN search_entries e ON e.seq = v.seq "
                   f"WHERE v.seq IN ({marks})", seqs)

    def scan(self, db: Unit, vector: bytes, filters: dict[str, str], n: int) -> list[Row]:
        """Exact k nearest in the vec0 table, the filters applied in the scan."""
        db.execute(f"PRAGMA mmap_size = {_MMAP}")
        where = "".join(f" AND {c} = ?" for c in filters)
        nearest = ("SELECT seq, 1 - distance AS score FROM search_vec_index "
                   f"WHERE embedding MATCH ? AND k = ?{where}")
        return db.execute(
            f"SELECT e.entity, e.kind, e.tree_id, substr(t.body, 1, {_SNIPPET_CHARS}), h.score "
            f"FROM ({nearest}) h JOIN search_entries e ON e.seq = h.seq "
            "JOIN search_text t ON t.rowid = h.seq ORDER BY h.score DESC",
            [vector, min(n, _MAX_K), *filters.values()])


class PostgresVectors:
    scans = False

    def texts(self, db: Unit, seqs: Sequence[int], chars: int) -> dict[int, str]:
        return {int(r[0]): r[1] or "" for r in db.execute(
            f"SELECT seq, left(body, ?) FROM search_entries WHERE seq IN ({_marks(len(seqs))})",
            [chars, *seqs])}

    def openings(self, db: Unit, seqs: Sequence[int]) -> dict[int, Row]:
        return {int(r[0]): r[1:] for r in db.execute(
            f"SELECT seq, entity, kind, tree_id, left(body, {_SNIPPET_CHARS}) "
            f"FROM search_entries WHERE seq IN ({_marks(len(seqs))})", list(seqs))}

    def clear(self, db: Unit) -> None:
        db.execute("DELETE FROM search_vectors")

    def drop_gone(self, db: Unit) -> None:
        """(A vector goes with its entry: a foreign key that cascades.)"""

    def store(self, db: Unit, rows: Sequence[tuple[int, bytes, str]]) -> None:
        db.execute("SELECT pg_advisory_xact_lock(?)", (VECTOR_LOCK,))
        db.execute("INSERT INTO search_vectors (seq, vseq, embedding, model) VALUES "
                   + ",".join(["(?, nextval('search_vectors_vseq'), ?, ?)"] * len(rows))
                   + " ON CONFLICT (seq) DO UPDATE SET vseq = excluded.vseq, "
                   "embedding = excluded.embedding, model = excluded.model",
                   [v for row in rows for v in row])

    def scan(self, db: Unit, vector: bytes, filters: dict[str, str], n: int) -> list[Row]:
        raise NotImplementedError("PostgreSQL ranks from the in-process cache")


def of(db: Unit) -> VectorStorage:
    """The vector storage of the unit's store."""
    impl: VectorStorage = _BY_DIALECT[db.dialect]
    return impl


_BY_DIALECT: dict[str, VectorStorage] = {"sqlite": SQLiteVectors(), "postgres": PostgresVectors()}
