"""One Loom shared by many threads, as a web server's workers share it, on every backend.

Eight threads run a mix of operations at once through the same Loom object:
  * appends to one shared session (policy `retry`): every one lands, in one chain;
  * appends to the thread's own session: its path is exactly its appends, in order;
  * forks of the thread's session: each new ref points where the session was;
  * context reads of the thread's session, and of the shared one, while others write;
  * writes rolled back on purpose (an append to each session inside a unit of work
    that raises, after a pause so that readers run while it is open): no reader ever
    sees one of their nodes, and nothing of them is left in the store or in the
    Loom's memories (the next append through the session still chains correctly).
No thread may raise anything but the rollback it causes itself.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import pytest

from loomdb import Loom
from notes_area import NOTES

THREADS = 8
OPS = int(os.environ.get("LOOMDB_TEST_THREAD_OPS", "240"))
POISON = "uncommitted"

pytestmark = pytest.mark.xdist_group("concurrency")


class _Abort(Exception):
    """Raised on purpose to roll a unit of work back."""


def _texts(context: dict[str, Any]) -> list[str]:
    return [block["text"] for m in context["messages"] for block in m["content"]]


class Worker:
    """One thread's operations and what it saw."""

    def __init__(self, loom: Loom, n: int, start: threading.Barrier) -> None:
        self.loom, self.n, self.start = loom, n, start
        self.own = f"own-{n}"
        self.shared_ids: list[str] = []
        self.own_ids: list[str] = []
        self.forks: list[tuple[str, str]] = []
        self.errors: list[str] = []
        self.reads = 0

    def run(self) -> None:
        try:
            self.start.wait(timeout=60)
            for i in range(OPS):
                self.step(i)
        except BaseException as exc:  # reported by the test, which fails on it
            self.errors.append(f"thread {self.n}: {type(exc).__name__}: {exc}")

    def step(self, i: int) -> None:
        loom, kind = self.loom, i % 6
        if kind in (0, 3):
            node = loom.append("shared", f"t{self.n} shared {i}", role="user")
            self.shared_ids.append(node.id)
        elif kind == 1:
            node = loom.append(self.own, f"t{self.n} own {i}", role="assistant")
            self.own_ids.append(node.id)
        elif kind == 2:
            self.read()
        elif kind == 4 and i % 12 == 4:
            name = f"fork-{self.n}-{i}"
            self.forks.append((name, loom.fork(self.own, name).node))
        elif kind == 4:
            self.read()
        else:
            self.rolled_back(i)

    def read(self) -> None:
        loom = self.loom
        own = _texts(loom.context(self.own))
        expected = [f"t{self.n} own {i}" for i in range(OPS)
                    if i % 6 == 1][: len(self.own_ids)]
        assert own[1:] == expected, f"thread {self.n} lost its own appends"
        # the shared thread grows to 8 x 167 turns: read it on every fourth read
        shared = _texts(loom.context("shared")) if self.reads % 4 == 0 else []
        assert not [t for t in shared + own if POISON in t], "a reader saw an uncommitted node"
        self.reads += 1

    def rolled_back(self, i: int) -> None:
        """Appends to both sessions in one unit of work that then fails."""
        try:
            with self.loom.unit(NOTES) as db:
                db.execute("INSERT INTO notes VALUES (?, ?)", (f"{self.n}-{i}", POISON))
                self.loom.append("shared", f"{POISON} shared {self.n} {i}")
                self.loom.append(self.own, f"{POISON} own {self.n} {i}")
                time.sleep(0.002)  # readers run while this is open
                raise _Abort
        except _Abort:
            pass


def test_one_loom_shared_by_threads(loom: Loom) -> None:
    tree, root = loom.new_tree("root", session="shared")
    for n in range(THREADS):
        loom.fork(root.id, f"own-{n}")
    with loom.unit(NOTES):
        pass  # the area's migrations, before the threads race for them
    start = threading.Barrier(THREADS)
    workers = [Worker(loom, n, start) for n in range(THREADS)]
    threads = [threading.Thread(target=w.run, name=f"worker-{w.n}") for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a worker hung"
    assert [e for w in workers for e in w.errors] == []
    assert all(w.reads for w in workers)

    # one chain for the shared session holding every append, each thread's in its order
    shared = loom.path("shared")
    assert shared[0] == root.id
    assert sorted(shared[1:]) == sorted(i for w in workers for i in w.shared_ids)
    position = {node: k for k, node in enumerate(shared)}
    for w in workers:
        assert [position[i] for i in w.shared_ids] == sorted(position[i] for i in w.shared_ids)
        assert loom.path(w.own) == [root.id, *w.own_ids]
        for name, node in w.forks:
            assert node in w.own_ids or node == root.id
            assert loom.ref(name).node == node

    # nothing of the rolled-back work exists: not a node, not a note
    appended = sum(len(w.shared_ids) + len(w.own_ids) for w in workers)
    assert loom.tree(tree.id).nodes == 1 + appended
    assert sorted(loom.leaves(tree.id)) == sorted(
        [shared[-1]] + [w.own_ids[-1] for w in workers])
    with loom.unit(NOTES) as db:
        assert db.execute("SELECT count(*) FROM notes") == [(0,)]
    assert loom.verify(tree.id).ok


def test_a_unit_belongs_to_its_thread(loom: Loom) -> None:
    from loomdb.errors import InvalidInput

    seen: list[BaseException] = []
    with loom.unit(NOTES) as db:
        def use() -> None:
            try:
                db.execute("SELECT count(*) FROM notes")
            except BaseException as exc:
                seen.append(exc)

        other = threading.Thread(target=use)
        other.start()
        other.join()
    assert len(seen) == 1 and isinstance(seen[0], InvalidInput)
