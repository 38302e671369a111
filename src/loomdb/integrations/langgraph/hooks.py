"""The LangGraph area in a forget (`loomdb.hooks`): a thread's tree deleted whole (`loomdb
delete tree:ID`) takes the thread's checkpoints, writes and values with it, so no
checkpoint is left naming messages that are gone."""

from __future__ import annotations

from typing import Any

from ...hooks import AreaHooks
from . import storage
from .area import LANGGRAPH


class LangGraphHooks(AreaHooks):
    forget_tables = ("lg_threads", "lg_checkpoints", "lg_writes", "lg_blobs", "lg_branches")

    def forget_tree(self, loom: Any, tree: str) -> None:  # the core Loom (below this layer)
        with loom.unit(LANGGRAPH) as db:
            for key, _ in storage.threads_of_tree(db, tree):
                storage.delete_thread(db, key)


HOOKS = LangGraphHooks()
