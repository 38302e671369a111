"""The LangGraph area in a forget (`loomdb.hooks`): a thread's tree deleted whole (`loomdb
delete tree:ID`) takes the thread's checkpoints, writes and values with it, so no
checkpoint is left naming messages that are gone; a message node deleted or redacted
takes what the area kept beside it (its LangChain fields)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...hooks import AreaHooks
from . import storage
from .area import LANGGRAPH


class LangGraphHooks(AreaHooks):
    forget_tables = ("lg_threads", "lg_checkpoints", "lg_writes", "lg_blobs", "lg_branches",
                     "lg_messages")

    def forget_nodes(self, loom: Any, ids: Sequence[str], memo_trees: Sequence[str],
                     redacted: bool) -> None:
        with loom.unit(LANGGRAPH) as db:
            storage.delete_messages(db, ids)

    def forget_tree(self, loom: Any, tree: str) -> None:  # the core Loom (below this layer)
        with loom.unit(LANGGRAPH) as db:
            for key, _ in storage.threads_of_tree(db, tree):
                storage.delete_thread(db, key)


HOOKS = LangGraphHooks()
