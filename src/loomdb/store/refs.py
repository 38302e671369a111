"""Refs and their logs: the interface, and the SQL both dialects share.

Where a ref's head is read from differs (SQLite: the last line of its log;
PostgreSQL: the refs row, locked inside a write), so reading and moving a ref are
written per dialect; names, selections, deletion and the log itself are shared."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

from ..model import Ref, RefMove
from .rows import loads
from .runner import SqlRunner

#: a ref log line as RefMove takes it
REF_LOG = "SELECT seq, ref_name, at, old_node, new_node, actor, reason, tree_id FROM ref_log"


class RefStore(ABC):
    """Named, movable pointers into trees, each with an append-only log of moves."""

    @abstractmethod
    def get_ref(self, name: str) -> Ref | None:
        """A ref with its head and selections (locked for the transaction, if any)."""

    @abstractmethod
    def list_refs(self, kind: str | None = None, tree_id: str | None = None) -> list[Ref]:
        """Refs by name, optionally of one kind and/or one tree."""

    @abstractmethod
    def ref_names_like(self, name: str, limit: int) -> list[str]:
        """Ref names close to `name` (sharing a prefix), to suggest on a miss."""

    @abstractmethod
    def insert_ref(self, ref: Ref, move: RefMove | None) -> bool:
        """Create a ref if the name is free (False when it exists), logging `move` (its
        creation) as the next line of the name's log. With no move the log must already
        lead to `ref.node`, as when a copy writes the log first; a backend that reads a
        ref's head from its log adds a line when it does not."""

    @abstractmethod
    def move_ref(self, move: RefMove) -> bool:
        """Compare-and-swap: log `move` as line `move.seq` of its ref's log and point the
        ref at `move.new`, only if that line is still free, i.e. nothing changed the
        ref since it was read at `move.seq - 1`. False (nothing written) otherwise."""

    @abstractmethod
    def delete_ref(self, name: str) -> None:
        """Remove a ref, its selections and its draft (its log stays)."""

    @abstractmethod
    def set_selection(self, name: str, slot: str, version: str | None) -> None:
        """Make ref `name` use `version` for `slot` (None clears the selection)."""

    @abstractmethod
    def log_move(self, move: RefMove) -> None:
        """Append a copied log line as the next line of its ref's log (imports, copies);
        moves go through `move_ref`."""

    @abstractmethod
    def ref_log(self, name: str) -> list[RefMove]:
        """Every recorded move of a ref, oldest first."""


def refs_from_rows(rows: Iterable[tuple[Any, ...]]) -> list[Ref]:
    """Refs from rows (name, kind, tree, head, origin, created, updated, seq, slot,
    version), one row per selection, grouped by name in the rows' order."""
    found: dict[str, Ref] = {}
    for name, kind, tree, node, origin, created, updated, seq, slot, version in rows:
        ref = found.get(name)
        if ref is None:
            ref = found[name] = Ref(
                name, kind, tree, node, created, updated, {}, loads(origin), seq or 0
            )
        if slot is not None:
            ref.selections[slot] = version
    return list(found.values())


class RefSQL(RefStore):
    """The parts of `RefStore` that are the same SQL in both dialects."""

    def __init__(self, sql: SqlRunner) -> None:
        self.sql = sql

    def ref_names_like(self, name: str, limit: int) -> list[str]:
        rows = self.sql.q_all(
            "SELECT name FROM refs WHERE name >= ? AND name < ? ORDER BY name LIMIT ?",
            (name[:2], name[:2] + "\uffff", limit),
        )
        return [r[0] for r in rows]

    def delete_ref(self, name: str) -> None:
        self.sql.q_run("DELETE FROM drafts WHERE ref_name = ?", (name,))
        self.sql.q_run("DELETE FROM ref_selections WHERE ref_name = ?", (name,))
        self.sql.q_run("DELETE FROM refs WHERE name = ?", (name,))

    def set_selection(self, name: str, slot: str, version: str | None) -> None:
        if version is None:
            self.sql.q_run("DELETE FROM ref_selections WHERE ref_name = ? AND slot_id = ?",
                       (name, slot))
        else:
            self.sql.q_run(
                "INSERT INTO ref_selections (ref_name, slot_id, version_id) VALUES (?,?,?)"
                " ON CONFLICT (ref_name, slot_id) DO UPDATE SET version_id = excluded.version_id",
                (name, slot, version),
            )

    def log_move(self, move: RefMove) -> None:
        # seq counts per ref; writers of one ref are serialized (SQLite: one writer;
        # PostgreSQL: the row lock their compare-and-swap on `refs` holds until commit)
        self.sql.q_run(
            "INSERT INTO ref_log (ref_name, seq, at, old_node, new_node, actor, reason, tree_id)"
            " VALUES (?, coalesce((SELECT seq FROM ref_log WHERE ref_name = ?"
            " ORDER BY seq DESC LIMIT 1), 0) + 1, ?, ?, ?, ?, ?,"
            " coalesce(?, (SELECT tree_id FROM refs WHERE name = ?)))",
            (move.ref, move.ref, move.at, move.old, move.new, move.actor, move.reason,
             move.tree, move.ref),
        )

    def ref_log(self, name: str) -> list[RefMove]:
        # the lines of the ref's own tree (one partition when the store is split by
        # tree); all of the name's lines only when some are elsewhere: the name was
        # deleted and made again in another tree
        found = self.sql.q_one("SELECT tree_id FROM refs WHERE name = ?", (name,))
        rows = self.sql.q_all(REF_LOG + " WHERE tree_id = ? AND ref_name = ? ORDER BY seq",
                          (found[0], name)) if found else []
        if not rows or rows[0][0] != 1:
            rows = self.sql.q_all(REF_LOG + " WHERE ref_name = ? ORDER BY seq", (name,))
        return current_lines([RefMove(*r) for r in rows])


def current_lines(moves: list[RefMove]) -> list[RefMove]:
    """The lines of the ref that holds the name now (or held it last): from its
    creation on. A name deleted and made again keeps one log numbering, but the
    earlier ref's lines (another owner's nodes and times, perhaps) are not this one's."""
    start = 0
    for i, move in enumerate(moves):
        if move.old is None and move.new is not None:
            start = i
    return moves[start:]
