"""Trees: the interface and the SQL both dialects share.

Only the node count and latest change of a tree (`tree_stats`) are read per dialect:
they scan the tree's nodes, whose layout differs."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from ..errors import InvalidInput
from ..model import Tree
from .rows import dumps, loads
from .runner import SqlRunner

#: columns a caller may change, by field name
TREE_FIELDS = {"title": "title", "root": "root_id", "updated_at": "updated_at",
               "archived_at": "archived_at", "lineage": "lineage"}
TREE_COLUMNS = (
    "SELECT t.id, t.title, t.mode, t.system, t.options, t.root_id, t.lineage, t.created_at,"
    " t.updated_at, t.archived_at,"
)


class TreeStore(ABC):
    """Tree rows: settings, title, root, archive state."""

    @abstractmethod
    def insert_tree(self, tree: Tree) -> None:
        """Store a new tree."""

    @abstractmethod
    def get_tree(self, tree_id: str, *, stats: bool = True) -> Tree | None:
        """The tree with its node count and its latest change as updated_at. Those read
        the whole tree: `stats=False` skips them (nodes 0, updated_at as stored) for the
        callers that only need its settings (context assembly, mode checks)."""

    @abstractmethod
    def list_trees(self, archived: bool = False) -> list[Tree]:
        """Active trees (or archived ones), newest first, with node counts."""

    @abstractmethod
    def update_tree(self, tree_id: str, fields: dict[str, Any]) -> None:
        """Set mutable tree fields: title, root, updated_at, archived_at, lineage (an
        import keeps only the spawn lineage it checked, `interop.links`)."""

    @abstractmethod
    def tree_ids_with_prefix(self, prefix: str, limit: int) -> list[str]:
        """Tree ids starting with `prefix`, in order, at most `limit`."""

    @abstractmethod
    def node_ids_in_trees(self, prefix: str, trees: Sequence[str], limit: int) -> list[str]:
        """Ids of nodes of `trees` starting with `prefix`, in order, at most `limit`
        (a name resolved against what one user may see, filtered in the query)."""


def tree_from_row(row: tuple[Any, ...]) -> Tree:
    """A Tree from `TREE_COLUMNS` followed by (node count, latest node time)."""
    tid, title, mode, system, options, root, lineage, created, updated, archived = row[:10]
    count, last = row[10], row[11]
    return Tree(
        id=tid, title=title, mode=mode, system=system, options=loads(options) or {},
        root=root, lineage=loads(lineage), created_at=created,
        updated_at=max(updated, last or ""), archived_at=archived, nodes=count or 0,
    )


class TreeSQL(TreeStore):
    """`TreeStore` over shared SQL; a dialect gives `stats`, the select of
    `TREE_COLUMNS` plus count and latest time from `trees t`."""

    def __init__(self, sql: SqlRunner, stats: str) -> None:
        self.sql = sql
        self.stats = stats

    def insert_tree(self, tree: Tree) -> None:
        self.sql.q_run(
            "INSERT INTO trees (id, title, mode, system, options, root_id, lineage, created_at,"
            " updated_at, archived_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (tree.id, tree.title, tree.mode, tree.system, dumps(tree.options or None),
             tree.root, dumps(tree.lineage), tree.created_at, tree.updated_at, tree.archived_at),
        )

    def get_tree(self, tree_id: str, *, stats: bool = True) -> Tree | None:
        select = self.stats if stats else TREE_COLUMNS + " NULL, NULL FROM trees t "
        row = self.sql.q_one(select + "WHERE t.id = ?", (tree_id,))
        return None if row is None else tree_from_row(row)

    def list_trees(self, archived: bool = False) -> list[Tree]:
        cond = "t.archived_at IS NOT NULL" if archived else "t.archived_at IS NULL"
        rows = self.sql.q_all(self.stats + f"WHERE {cond} ORDER BY t.created_at DESC, t.id")
        return [tree_from_row(r) for r in rows]

    def update_tree(self, tree_id: str, fields: dict[str, Any]) -> None:
        bad = [k for k in fields if k not in TREE_FIELDS]
        if bad:
            raise InvalidInput("tree", f"unknown field {bad[0]!r}")
        sets = ", ".join(f"{TREE_FIELDS[k]} = ?" for k in fields)
        values = [dumps(v) if k == "lineage" else v for k, v in fields.items()]
        self.sql.q_run(f"UPDATE trees SET {sets} WHERE id = ?", (*values, tree_id))

    def tree_ids_with_prefix(self, prefix: str, limit: int) -> list[str]:
        rows = self.sql.q_all(
            "SELECT id FROM trees WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
            (prefix, prefix + "\uffff", limit),
        )
        return [r[0] for r in rows]

    def node_ids_in_trees(self, prefix: str, trees: Sequence[str], limit: int) -> list[str]:
        found: list[str] = []
        for cond, args in self.sql.ids_in("tree_id", sorted(set(trees))):
            found += [r[0] for r in self.sql.q_all(
                f"SELECT id FROM nodes WHERE id >= ? AND id < ? AND {cond} ORDER BY id LIMIT ?",
                (prefix, prefix + "\uffff", *args, limit))]
        return sorted(found)[:limit]
