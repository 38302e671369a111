"""Writing the search index: entries the other areas give it (through `loomdb.hooks`,
in their own transactions), and messages: the core calls the area's write hook on
every node it writes (`hooks.py`), which queues the node's id, and a search first
indexes the queue, so an import is searchable at the next query without slowing it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .. import content as C
from . import SEARCH, chunks
from . import dialects as D
from .storage import MAX_INDEXED, Entry

if TYPE_CHECKING:
    from ..loom import Loom

__all__ = ["MAX_INDEXED", "catch_up", "delete_entries", "put_entry", "queue"]

_BATCH = 2000


def put_entry(loom: Loom, entity: str, kind: str, text: str, *, tree: str | None = None,
              role: str | None = None, author: str | None = None) -> None:
    """Index (or re-index) one entity; joins the caller's transaction."""
    with loom.unit(SEARCH) as db:
        store = D.storage(db)
        store.delete(db, [entity])
        store.insert(db, [(entity, kind, tree, role, author, text)])


def delete_entries(loom: Loom, prefix: str) -> None:
    """Forget every entity whose address starts with `prefix`."""
    with loom.unit(SEARCH) as db:
        store = D.storage(db)
        store.delete(db, store.entities_with_prefix(db, prefix))


def queue(loom: Loom, node_ids: Sequence[str]) -> None:
    """Queue nodes to be indexed at the next search (their entries are replaced)."""
    with loom.unit(SEARCH) as db:
        D.storage(db).queue(db, node_ids)


def catch_up(loom: Loom) -> int:
    """Index every node written since the last search; returns how many. On
    PostgreSQL with `rum`, a tail grown past its bound is then sealed (see chunks.py)."""
    done = _index_pending(loom)
    if done:
        chunks.maintain(loom)
    return done


def _index_pending(loom: Loom) -> int:
    done = 0
    while True:
        with loom.unit(SEARCH) as db:
            store = D.storage(db)
            if not store.any_queued(db):
                return done
            rows = store.queued(db, _BATCH)
            if not rows:
                return done
            ids = list(dict.fromkeys(r[1] for r in rows))
            entries: list[Entry] = [
                (n.id, "message", n.tree, n.role, n.author, C.plain_text(n.content))
                for n in loom.nodes(ids)]
            store.delete(db, [e[0] for e in entries])
            store.insert(db, entries)
            store.unqueue(db, [r[0] for r in rows])
            done += len(entries)
