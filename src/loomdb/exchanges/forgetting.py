"""The gateway's memo in a forget (`loomdb.hooks`): the memo holds digests of the
text of every message on a path, so a forgotten node's rows go, and with a redaction
all of the memo of its trees (the redacted text is inside every later digest)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..hooks import AreaHooks
from .paths import GATEWAY

if TYPE_CHECKING:
    from ..loom import Loom

_TABLES = ("gateway_paths", "gateway_buffers", "gateway_recent")


class GatewayHooks(AreaHooks):
    forget_tables = _TABLES

    def forget_nodes(self, loom: Loom, ids: Sequence[str], memo_trees: Sequence[str],
                     redacted: bool) -> None:
        with loom.unit(GATEWAY) as db:
            for table in _TABLES:
                for cond, args in db.where_in("node_id", ids):
                    db.execute(f"DELETE FROM {table} WHERE {cond}", args)
                for cond, args in db.where_in("tree_id", memo_trees):
                    db.execute(f"DELETE FROM {table} WHERE {cond}", args)

    def forget_tree(self, loom: Loom, tree: str) -> None:
        self.forget_nodes(loom, [], [tree], False)


HOOKS = GatewayHooks()
