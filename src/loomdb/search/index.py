"""Writing the search index: entries put by the areas in their own transactions, and
messages caught up from the queue the core's inserts fill (see the migration)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .. import content as C
from ..store.areas import Unit
from . import SEARCH, chunks

if TYPE_CHECKING:
    from ..loom import Loom

#: characters of a text that are indexed (PostgreSQL refuses tsvectors over 1 MB)
MAX_INDEXED = 100_000
_BATCH = 2000
_ROWS = 200  # rows per multi-row INSERT

Entry = tuple[str, str, str | None, str | None, str | None, str]  # entity kind tree role author text


def put_entry(loom: Loom, entity: str, kind: str, text: str, *, tree: str | None = None,
              role: str | None = None, author: str | None = None) -> None:
    """Index (or re-index) one entity; joins the caller's transaction."""
    with loom.unit(SEARCH) as db:
        _delete(db, [entity])
        _insert(db, [(entity, kind, tree, role, author, text)])


def delete_entries(loom: Loom, prefix: str) -> None:
    """Forget every entity whose address starts with `prefix`."""
    with loom.unit(SEARCH) as db:
        found = [r[0] for r in db.execute(
            "SELECT entity FROM search_entries WHERE substr(entity, 1, ?) = ?",
            (len(prefix), prefix))]
        _delete(db, found)


_TRIGGER = {
    "sqlite": ("SELECT 1 FROM sqlite_master WHERE type = 'trigger' "
               "AND name = 'search_node_written'",
               "CREATE TRIGGER search_node_written AFTER INSERT ON nodes BEGIN "
               "INSERT INTO search_pending (node_id) VALUES (new.id); END"),
    "postgres": ("SELECT 1 FROM pg_trigger WHERE tgname = 'search_node_written'",
                 "CREATE TRIGGER search_node_written AFTER INSERT ON nodes "
                 "FOR EACH ROW EXECUTE FUNCTION search_node_written()"),
}


def _heal_trigger(loom: Loom) -> None:
    """Re-create the queue's trigger if a core migration rebuilt the nodes table (which
    drops its triggers), and queue every node the index lacks."""
    with loom.unit(SEARCH) as db:
        exists, create = _TRIGGER[db.dialect]
        if db.one(exists) is not None:
            return
        db.execute(create)
        db.execute("INSERT INTO search_pending (node_id) SELECT n.id FROM nodes n WHERE NOT "
                   "EXISTS (SELECT 1 FROM search_entries e WHERE e.entity = n.id)")


def catch_up(loom: Loom) -> int:
    """Index every node written since the last search; returns how many. On PostgreSQL
    with `rum`, a tail grown past its bound is then sealed (see chunks.py)."""
    _heal_trigger(loom)
    done = _index_pending(loom)
    if done:
        chunks.maintain(loom)
    return done


def _index_pending(loom: Loom) -> int:
    done = 0
    while True:
        with loom.unit(SEARCH) as db:
            if db.one("SELECT 1 FROM search_pending LIMIT 1") is None:
                return done
            lock = " FOR UPDATE SKIP LOCKED" if db.dialect == "postgres" else ""
            rows = db.execute(
                f"SELECT seq, node_id FROM search_pending ORDER BY seq LIMIT ?{lock}", (_BATCH,))
            if not rows:
                return done
            ids = list(dict.fromkeys(r[1] for r in rows))
            nodes = loom.nodes(ids)
            entries: list[Entry] = [
                (n.id, "message", n.tree, n.role, n.author, C.plain_text(n.content))
                for n in nodes]
            _delete(db, [e[0] for e in entries])
            _insert(db, entries)
            _delete_pending(db, [r[0] for r in rows])
            done += len(entries)


def _delete_pending(db: Unit, seqs: Sequence[int]) -> None:
    for i in range(0, len(seqs), 500):
        part = seqs[i:i + 500]
        db.execute(f"DELETE FROM search_pending WHERE seq IN ({_marks(len(part))})", part)


def _delete(db: Unit, entities: Sequence[str]) -> None:
    for i in range(0, len(entities), 500):
        part = list(entities[i:i + 500])
        if db.dialect == "sqlite":
            db.execute("DELETE FROM search_text WHERE rowid IN (SELECT seq FROM search_entries "
                       f"WHERE entity IN ({_marks(len(part))}))", part)
        db.execute(f"DELETE FROM search_entries WHERE entity IN ({_marks(len(part))})", part)


def _insert(db: Unit, entries: Sequence[Entry]) -> None:
    for i in range(0, len(entries), _ROWS):
        # PostgreSQL text holds no NUL character: it separates words like a space
        part = [(*e[:5], e[5][:MAX_INDEXED].replace("\x00", " ")) for e in entries[i:i + _ROWS]]
        if db.dialect == "postgres":
            db.execute("INSERT INTO search_entries (entity, kind, tree_id, role, author, body) "
                       "VALUES " + ",".join(["(?, ?, ?, ?, ?, ?)"] * len(part)),
                       [v for row in part for v in row])
            continue
        rows = db.execute("INSERT INTO search_entries (entity, kind, tree_id, role, author) "
                          "VALUES " + ",".join(["(?, ?, ?, ?, ?)"] * len(part))
                          + " RETURNING seq, entity", [v for row in part for v in row[:5]])
        seq = {entity: s for s, entity in rows}
        args: list[Any] = []
        for row in part:
            args += [seq[row[0]], row[5]]
        db.execute("INSERT INTO search_text (rowid, body) VALUES "
                   + ",".join(["(?, ?)"] * len(part)), args)


def _marks(n: int) -> str:
    return ",".join("?" * n)
