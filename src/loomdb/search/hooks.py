"""The search area's hooks (`loomdb.hooks`): it hears of every node the core writes
(queued, indexed at the next search: in place of the trigger on `nodes` its first
migration made), indexes the text the other areas give it, and erases its copies of a
forgotten text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..hooks import AreaHooks
from . import SEARCH, index
from . import dialects as D

if TYPE_CHECKING:
    from ..loom import Loom
    from ..model import Node
    from ..store.areas import Unit


class SearchHooks(AreaHooks):
    #: the tables a forget writes (the tail exists with `rum` only)
    forget_tables = ("search_entries", "search_tail", "search_pending")

    def nodes_written(self, db: Unit, nodes: Sequence[Node]) -> None:
        """Queue the nodes (one small insert per append, in the core's transaction)."""
        D.storage(db).queue(db, [n.id for n in nodes])

    def entity_written(self, loom: Loom, entity: str, kind: str, text: str) -> None:
        index.put_entry(loom, entity, kind, text)

    def entities_removed(self, loom: Loom, prefix: str) -> None:
        index.delete_entries(loom, prefix)

    def forget_nodes(self, loom: Loom, ids: Sequence[str], memo_trees: Sequence[str],
                     redacted: bool) -> dict[str, str] | None:
        with loom.unit(SEARCH) as db:
            D.storage(db).forget_nodes(db, ids)
        from .semantic.index import forget_vectors

        return forget_vectors(loom)  # the entries' vectors, in the same transaction

    def nodes_changed(self, loom: Loom, ids: Sequence[str]) -> None:
        """Indexed again from what they hold now, at the next search (their entries and
        vectors went with `forget_nodes`)."""
        with loom.unit(SEARCH) as db:
            D.storage(db).queue(db, list(ids))


HOOKS = SearchHooks()
