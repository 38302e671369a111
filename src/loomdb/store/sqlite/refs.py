"""SQLite's refs: a ref's head is the last line of its log.

`ref_log` is one b-tree keyed by (ref_name, seq); a move inserts line `seq + 1` of the
ref as it was read, so the primary key *is* the compare-and-swap: a writer that read
an older line finds it taken. The `refs` row (kind, tree, origin) never changes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from ...model import Ref, RefMove
from ..refs import RefSQL, refs_from_rows
from ..rows import dumps
from .connections import Connections

#: a ref with its head (the last line of its log) and its selections
_REF_SELECT = (
    "SELECT r.name, r.kind, r.tree_id, l.new_node, r.origin, r.created_at, l.at, l.seq,"
    " s.slot_id, s.version_id FROM refs r JOIN ref_log l ON l.ref_name = r.name"
    " AND l.seq = (SELECT max(seq) FROM ref_log x WHERE x.ref_name = r.name)"
    " LEFT JOIN ref_selections s ON s.ref_name = r.name "
)


class SQLiteRefs(RefSQL):
    """`RefStore` on SQLite; see the module docstring."""

    def __init__(self, connections: Connections) -> None:
        super().__init__(connections)
        self.c = connections

    def _refs(self, where: str, args: Sequence[Any]) -> list[Ref]:
        """Refs with their heads and selections in one query (no query per ref)."""
        return refs_from_rows(self.c.db.execute(_REF_SELECT + f"{where} ORDER BY r.name", args))

    def get_ref(self, name: str) -> Ref | None:
        found = self._refs("WHERE r.name = ?", (name,))
        return found[0] if found else None

    def list_refs(self, kind: str | None = None, tree_id: str | None = None) -> list[Ref]:
        conds, args = [], []
        if kind:
            conds.append("r.kind = ?")
            args.append(kind)
        if tree_id:
            conds.append("r.tree_id = ?")
            args.append(tree_id)
        return self._refs(("WHERE " + " AND ".join(conds)) if conds else "", args)

    def insert_ref(self, ref: Ref, move: RefMove | None) -> bool:
        cur = self.c.db.execute(
            "INSERT OR IGNORE INTO refs VALUES (?,?,?,?,?)",
            (ref.name, ref.kind, ref.tree, dumps(ref.origin), ref.created_at),
        )
        if not cur.rowcount:
            return False
        if ref.selections:
            self.c.db.executemany(
                "INSERT INTO ref_selections VALUES (?,?,?)",
                [(ref.name, s, v) for s, v in ref.selections.items()],
            )
        last = self.c.db.execute(
            "SELECT new_node FROM ref_log WHERE ref_name = ? ORDER BY seq DESC LIMIT 1",
            (ref.name,),
        ).fetchone()
        if move is None and (last is None or last[0] != ref.node):
            # the head is the log's last line: a copied log that ends elsewhere gets one
            move = RefMove(0, ref.name, ref.updated_at, last and last[0], ref.node, "loomdb",
                           "copy: head")
        if move is not None:
            self.log_move(move)
        return True

    def move_ref(self, move: RefMove) -> bool:
        try:
            self.c.db.execute(
                "INSERT INTO ref_log VALUES (?,?,?,?,?,?,?,?)",
                (move.ref, move.seq, move.at, move.old, move.new, move.actor, move.reason,
                 move.tree),
            )
        except sqlite3.IntegrityError:
            return False  # line seq is taken: the ref changed since it was read
        return True
