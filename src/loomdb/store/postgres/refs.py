"""PostgreSQL's refs: the head is on the refs row, locked inside a write.

Writers of one ref serialize on its row: inside a transaction `get_ref` reads the ref
`FOR UPDATE`, so the Loom's read-then-compare-and-swap is exact under READ COMMITTED
and a concurrent append waits for the head instead of forking or failing; writers of
other refs never wait. The refs row keeps the head and the number of the log line
that brought it there; `move_ref` updates it only if that number is still the one the
writer read, so a writer that read an older line (a Loom appending from the head it
remembers) is refused, as on SQLite.
"""

from __future__ import annotations

from typing import Any

from ...model import Ref, RefMove
from ..refs import RefSQL, refs_from_rows
from ..rows import dumps
from .connections import Connections

_REF_SELECT = (
    "SELECT r.name, r.kind, r.tree_id, r.node_id, r.origin, r.created_at, r.updated_at,"
    " r.seq,"
    " s.slot_id, s.version_id FROM refs r LEFT JOIN ref_selections s ON s.ref_name = r.name "
)


class PostgresRefs(RefSQL):
    """`RefStore` on PostgreSQL; see the module docstring."""

    def __init__(self, connections: Connections) -> None:
        super().__init__(connections)
        self.c = connections

    @staticmethod
    def _refs(rows: list[tuple[Any, ...]]) -> list[Ref]:
        return refs_from_rows(rows)

    def get_ref(self, name: str) -> Ref | None:
        # inside a write, lock the row: writers of this ref queue here, so the Loom's
        # read-then-CAS sees the latest head instead of losing the race at the CAS
        lock = " FOR UPDATE OF r" if not self.c.committed() else ""
        found = self._refs(self.c.fetch_all(_REF_SELECT + f"WHERE r.name = %s{lock}", (name,)))
        return found[0] if found else None

    def list_refs(self, kind: str | None = None, tree_id: str | None = None) -> list[Ref]:
        conds, args = [], []
        if kind:
            conds.append("r.kind = %s")
            args.append(kind)
        if tree_id:
            conds.append("r.tree_id = %s")
            args.append(tree_id)
        where = ("WHERE " + " AND ".join(conds)) if conds else ""
        return self._refs(self.c.fetch_all(_REF_SELECT + f"{where} ORDER BY r.name, s.slot_id", args))

    def insert_ref(self, ref: Ref, move: RefMove | None) -> bool:
        cur = self.c.run(
            "INSERT INTO refs (name, kind, tree_id, node_id, origin, created_at, updated_at)"
            " VALUES (%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (name) DO NOTHING",
            (ref.name, ref.kind, ref.tree, ref.node, dumps(ref.origin), ref.created_at,
             ref.updated_at),
        )
        if cur.rowcount and ref.selections:
            self.c.run_many(
                "INSERT INTO ref_selections VALUES (%s,%s,%s)",
                [(ref.name, s, v) for s, v in ref.selections.items()],
            )
        if not cur.rowcount:
            return False
        if move is not None:
            self.log_move(move)
        self.c.run("UPDATE refs SET seq = coalesce((SELECT max(seq) FROM ref_log"
                  " WHERE ref_name = %s), 0) WHERE name = %s", (ref.name, ref.name))
        return True

    def move_ref(self, move: RefMove) -> bool:
        # the refs row first (it records the line that brought the ref to its head):
        # every writer of a ref locks that row before its log, so none can wait on a
        # log line while holding the row another one needs
        cur = self.c.run(
            "UPDATE refs SET node_id = coalesce(%s, node_id), updated_at = %s, seq = %s"
            " WHERE name = %s AND seq = %s",
            (move.new, move.at, move.seq, move.ref, move.seq - 1),
        )
        if not cur.rowcount:
            return False
        self.c.run(
            "INSERT INTO ref_log (ref_name, seq, at, old_node, new_node, actor, reason, tree_id)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, coalesce(%s,"
            " (SELECT tree_id FROM refs WHERE name = %s)))",
            (move.ref, move.seq, move.at, move.old, move.new, move.actor, move.reason,
             move.tree, move.ref),
        )
        return True

