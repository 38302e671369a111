"""A thread's lines of checkpoints as session refs of its tree.

The root namespace's checkpoints form lines: a checkpoint put after the newest one of
a line continues it; one put after any other checkpoint (an `update_state` or a replay
from the past) starts a new line, a fork. Line 0 is the session `lg/<thread>`, line N
the session `lg/<thread>/fork-N`, made at the node the fork starts from (nothing is
copied: a ref) and moved with each checkpoint that changes the messages, so `loomdb
tree`, `log` and the page show each line as a branch of the conversation. A thread id
that is no ref name is named by its digest (`lg/t-<16 hex>`).
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

from ...errors import NotFound
from ...store.areas import Unit
from . import storage
from .paths import Thread

if TYPE_CHECKING:
    from ...api import Loom

_PLAIN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")


def ref_name(thread_id: str, branch: int) -> str:
    """The session that follows a line of a thread's checkpoints."""
    base = thread_id if _PLAIN.match(thread_id) and ".." not in thread_id \
        and not thread_id.endswith(".") else \
        "t-" + hashlib.sha256(thread_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"lg/{base}" if branch == 0 else f"lg/{base}/fork-{branch}"


class Branches:
    """Which line a root checkpoint is on, and its session (see the module docstring)."""

    def __init__(self, loom: Loom) -> None:
        self.loom = loom

    def follow(self, db: Unit, thread: Thread, parent_id: str | None,
               parent_branch: int | None, checkpoint_id: str, old_tip: str | None,
               new_tip: str | None) -> int:
        """The line of a new checkpoint; its session moved to `new_tip` (inside the
        put's unit)."""
        branch = storage.branch_with_head(db, thread.key, parent_id) if parent_id else None
        fork = branch is None and storage.has_branches(db, thread.key)
        if branch is None:
            branch = storage.next_fork(db, thread.key) if fork else 0
            started = True
        else:
            started = False
        storage.set_head(db, thread.key, branch, checkpoint_id)
        if new_tip is not None and thread.tree is not None and (started or new_tip != old_tip):
            name = ref_name(thread.thread_id, branch)
            try:
                self.loom.set_ref(name, new_tip)
            except NotFound:
                origin: dict[str, object] = {"langgraph": {"thread_id": thread.thread_id,
                                                           "line": branch}}
                if fork and old_tip is not None:
                    origin["forked_from"] = {
                        "ref": None if parent_branch is None else
                        ref_name(thread.thread_id, parent_branch), "node": old_tip}
                self.loom.create_ref(name, "session", thread.tree, new_tip, {}, origin)
        return branch

    def drop(self, thread_id: str, branches: list[int]) -> None:
        """Delete a thread's sessions (its tree stays: another thread shares it)."""
        for branch in branches:
            try:
                self.loom.delete_ref(ref_name(thread_id, branch))
            except NotFound:
                pass

    def copy(self, db: Unit, source: str, target: str, source_key: int) -> None:
        """The target's sessions at the nodes the source's are at."""
        for branch in storage.branches(db, source_key):
            try:
                ref = self.loom.ref(ref_name(source, branch))
            except NotFound:
                continue
            name = ref_name(target, branch)
            try:
                self.loom.set_ref(name, ref.node)
            except NotFound:
                origin = {"langgraph": {"thread_id": target, "line": branch},
                          "forked_from": {"ref": ref.name, "node": ref.node}}
                self.loom.create_ref(name, "session", ref.tree, ref.node, {}, origin)
