"""The shares area's hooks (`loomdb.hooks`): its part of a forget. A fork made through
a link keeps a grant naming the shared tree and node; forgetting either end takes the
grant with it, so the fork's context stops at its own messages and nothing names what
was forgotten."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..hooks import AreaHooks
from . import SHARES

if TYPE_CHECKING:
    from ..loom import Loom


class ShareHooks(AreaHooks):
    forget_tables = ("share_forks",)

    def forget_nodes(self, loom: Loom, ids: Sequence[str], memo_trees: Sequence[str],
                     redacted: bool) -> None:
        if redacted:  # the node stays (its text redacted): the fork reads it so
            return
        with loom.unit(SHARES) as db:
            for cond, args in db.where_in("source_node", ids):
                db.execute(f"DELETE FROM share_forks WHERE {cond}", args)

    def forget_tree(self, loom: Loom, tree: str) -> None:
        with loom.unit(SHARES) as db:
            db.execute("DELETE FROM share_forks WHERE tree_id = ? OR source_tree = ?",
                       (tree, tree))


HOOKS = ShareHooks()
