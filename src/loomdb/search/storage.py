"""The search area's storage: every statement it runs, behind one small interface.

The logic (`index.py`, `service.py`, `chunks.py`) calls `of(db)` for the store's
implementation and never asks which dialect it runs on: SQLite keeps the words in an
FTS5 table beside the entries (`sqlite.py`), PostgreSQL a tsvector in the entries or,
with the `rum` extension, in a tail and RUM-indexed chunks (`postgres.py`). What both
share is written once here (`SharedSQL`, `?` placeholders on the area's unit).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..store.areas import Unit

if TYPE_CHECKING:
    from .service import Query

#: (entity, kind, tree, role, author, text): one entry of the index
Entry = tuple[str, str, str | None, str | None, str | None, str]
#: (entity, kind, tree, snippet, score): one hit, best first
Hit = tuple[Any, ...]
#: characters of a text that are indexed (PostgreSQL refuses tsvectors over 1 MB)
MAX_INDEXED = 100_000
#: rows per statement where a list of values is bound
ROWS = 200
_IDS = 500


def marks(n: int) -> str:
    return ",".join("?" * n)


@dataclass(frozen=True)
class Scope:
    """What one caller may see, given to the query so that nothing else is ranked:
    messages in `trees` (ids), revisions of `documents` and items of `collections`
    (names: an entry's entity is `doc:NAME@REV` or `coll:NAME/ITEM`). None instead of
    a Scope: the whole store (the operator)."""

    trees: frozenset[str] = frozenset()
    documents: frozenset[str] = frozenset()
    collections: frozenset[str] = frozenset()

    def keys(self) -> set[str]:
        """Every key an entry the caller sees has (see `owner`)."""
        return ({*self.trees} | {"doc:" + d for d in self.documents}
                | {"coll:" + c for c in self.collections})


def owner(kind: str, entity: str, tree: str | None) -> str | None:
    """The key an entry is seen by (`Scope.keys`): its tree, or its document's or
    collection's name."""
    if kind == "message":
        return tree
    if kind == "document" and entity.startswith("doc:"):
        return "doc:" + entity[4:].partition("@")[0]
    if kind == "item" and entity.startswith("coll:"):
        return "coll:" + entity[5:].partition("/")[0]
    return None


class SearchStorage(Protocol):
    """What the search logic asks of its tables."""

    #: whether the store may rank from sealed chunks (PostgreSQL with `rum`)
    chunked: bool

    def queue(self, db: Unit, node_ids: Sequence[str]) -> None:
        """Queue nodes the core wrote, to be indexed at the next search."""

    def queued(self, db: Unit, n: int) -> list[tuple[int, str]]:
        """Up to `n` queued (seq, node id), oldest first; locked to this unit where
        several indexers may run at once."""

    def any_queued(self, db: Unit) -> bool: ...

    def unqueue(self, db: Unit, seqs: Sequence[int]) -> None: ...

    def entities_with_prefix(self, db: Unit, prefix: str) -> list[str]: ...

    def insert(self, db: Unit, entries: Sequence[Entry]) -> None:
        """Index entries whose entities are not indexed (`delete` them first)."""

    def delete(self, db: Unit, entities: Sequence[str]) -> None: ...

    def forget_nodes(self, db: Unit, ids: Sequence[str]) -> None:
        """Erase every trace of these nodes' text: entries, queue, and the words a
        full-text index keeps after a delete."""

    def query(self, db: Unit, words: list[str], q: Query, tree: str | None, limit: int,
              tables: list[str] | None, scope: Scope | None = None) -> list[Hit]:
        """Full-text hits for all of `words` with the query's filters, best first
        (`tables`: the tail and chunks to rank from, see chunks.py), among the entries
        `scope` holds (None: all): the others are filtered out before the ranking."""


class SharedSQL:
    """The statements both dialects run alike."""

    chunked = False

    def queue(self, db: Unit, node_ids: Sequence[str]) -> None:
        if len(node_ids) == 1:  # (an append: one small insert)
            db.execute("INSERT INTO search_pending (node_id) VALUES (?)", node_ids)
            return
        for i in range(0, len(node_ids), ROWS):
            part = list(node_ids[i:i + ROWS])
            db.execute("INSERT INTO search_pending (node_id) VALUES "
                       + ",".join(["(?)"] * len(part)), part)

    def any_queued(self, db: Unit) -> bool:
        return db.one("SELECT 1 FROM search_pending LIMIT 1") is not None

    def unqueue(self, db: Unit, seqs: Sequence[int]) -> None:
        for i in range(0, len(seqs), _IDS):
            part = list(seqs[i:i + _IDS])
            db.execute(f"DELETE FROM search_pending WHERE seq IN ({marks(len(part))})", part)

    def entities_with_prefix(self, db: Unit, prefix: str) -> list[str]:
        return [str(r[0]) for r in db.execute(
            "SELECT entity FROM search_entries WHERE substr(entity, 1, ?) = ?",
            (len(prefix), prefix))]

    def _delete_entries(self, db: Unit, column: str, table: str,
                        values: Sequence[str]) -> None:
        for i in range(0, len(values), _IDS):
            part = list(values[i:i + _IDS])
            db.execute(f"DELETE FROM {table} WHERE {column} IN ({marks(len(part))})", part)


def filters(q: Query, tree: str | None, alias: str) -> tuple[str, list[Any]]:
    """The query's filters as ` AND alias.column = ?` conditions and their values."""
    where, args = "", []
    for column, value in (("tree_id", tree), ("role", q.role), ("author", q.author),
                          ("kind", q.kind)):
        if value is not None:
            where += f" AND {alias}.{column} = ?"
            args.append(value)
    return where, args


def clean(entries: Sequence[Entry]) -> list[Entry]:
    """Texts cut to MAX_INDEXED; a NUL separates words like a space (PostgreSQL text
    holds none), and so do the two characters that mark matches in a snippet (`MARKS`),
    so no indexed text holds a marker."""
    return [(*e[:5], e[5][:MAX_INDEXED].translate(_BLANKS)) for e in entries]


#: what opens and closes a match in a snippet as the backends write it (control
#: characters: `clean` keeps them out of every indexed text)
MARKS = ("\x02", "\x03")
_BLANKS = str.maketrans({"\x00": " ", MARKS[0]: " ", MARKS[1]: " "})


