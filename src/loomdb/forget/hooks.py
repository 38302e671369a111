"""What the retention area does when the core forgets (`loomdb.hooks`): a tree deleted
whole leaves the trash, and its holds go, in the delete's own transaction (a purge
cut short leaves the tree in the trash, whole)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..hooks import AreaHooks
from . import RETENTION

if TYPE_CHECKING:
    from ..loom import Loom


class RetentionHooks(AreaHooks):
    forget_tables = ("trash", "retention_holds")

    def forget_tree(self, loom: Loom, tree: str) -> None:
        with loom.unit(RETENTION) as db:
            db.execute("DELETE FROM trash WHERE tree_id = ?", (tree,))
            db.execute("DELETE FROM retention_holds WHERE kind = 'tree' AND name = ?",
                       (tree,))


HOOKS = RetentionHooks()
