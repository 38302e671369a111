"""The Claude session store in a forget (`loomdb.hooks`): a session's tree deleted whole
(`loomdb delete tree:ID`) takes its transcripts with it (the session, its subagents'
transcripts, the forks whose refs were in that tree), so the store forgets what loomdb
forgot: a later `load` finds no such session."""

from __future__ import annotations

from typing import Any

from ...hooks import AreaHooks
from . import storage
from .area import SESSIONS


class SessionHooks(AreaHooks):
    forget_tables = ("cc_sessions", "cc_entries")

    def forget_tree(self, loom: Any, tree: str) -> None:  # the core Loom (below this layer)
        with loom.unit(SESSIONS) as db:
            for key in storage.of_tree(db, tree):
                found = storage.project_session(db, key)
                keys = [key]
                if found is not None and found[2] == "":
                    keys += [k for k, _ in storage.subpaths(db, found[0], found[1])]
                for k in keys:
                    storage.delete_session(db, k)


HOOKS = SessionHooks()
