"""Crash safety of forgetting, on both backends: a process deleting a subtree, or
redacting a node, is killed with SIGKILL at each of its statements in turn (a hook
counts the statements the forget runs and kills the process at the k-th, so every
interleaving is reached deterministically, no timing involved). After each kill the
store opens, verifies, and shows the tree exactly as before or exactly as after.

The writer is a fork of this test process, as in tests/test_crash.py."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable

import pytest

import loomdb
from helpers import texts_of, thread
from loomdb import Loom
from loomdb.forget import service as F
from loomdb.storage_ops import storage
from loomdb.store.forget import ForgetStore

pytestmark = pytest.mark.slow


def killed_at(url: str, k: int, work: Callable[[Loom], object]) -> bool:
    """Run `work` in a forked process killed at its k-th forget statement; True when it
    was killed, False when it finished first."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 0
        try:
            calls = 0
            original = ForgetStore._run

            def counted(self: ForgetStore, sql: str, args: object = ()) -> object:
                nonlocal calls
                calls += 1
                if calls == k:
                    os.kill(os.getpid(), signal.SIGKILL)
                return original(self, sql, args)  # type: ignore[arg-type]

            ForgetStore._run = counted  # type: ignore[assignment,method-assign]
            with loomdb.open(url) as loom:
                work(loom)
        except BaseException:  # noqa: BLE001 - reported by the exit code
            import traceback

            traceback.print_exc()
            code = 3
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        assert os.WTERMSIG(status) == signal.SIGKILL
        return True
    assert os.WEXITSTATUS(status) == 0, "the forget failed"
    return False


def state(loom: Loom, tree: str) -> tuple[frozenset[str], frozenset[str], tuple[str, ...]]:
    known = storage(loom).tree_by_id(tree) is not None
    nodes = frozenset(n.id for n in loom.tree_nodes(tree)) if known else frozenset()
    refs = frozenset(r.name for r in loom.refs(tree=tree))
    leaves = tuple(t for leaf in sorted(loom.leaves(tree)) for t in texts_of(loom, leaf)) \
        if nodes else ()
    return nodes, refs, leaves


@pytest.mark.parametrize("action", ["delete", "redact"])
def test_a_forget_killed_at_any_statement_leaves_before_or_after(
        store_url: str, action: str) -> None:
    k = 0
    seen = {"before": 0, "after": 0}
    while True:
        k += 1
        assert k < 400, "the forget never finished"
        with loomdb.open(store_url) as loom:
            ids = thread(loom, [f"k{k} q0", f"k{k} a1", f"k{k} q2 secret", f"k{k} a3",
                                f"k{k} q4"], session=f"main{k}")
            loom.fork(ids[1], f"side{k}")
            loom.append(f"side{k}", f"k{k} side", role="user")
            tree = loom.resolve(ids[0]).tree
            before = state(loom, tree)
        if action == "delete":
            def work(lm: Loom, target: str = ids[2]) -> object:
                return F.delete(lm, target, force=True)
        else:
            def work(lm: Loom, target: str = ids[2]) -> object:
                return F.redact(lm, target)
        killed = killed_at(store_url, k, work)
        with loomdb.open(store_url) as loom:
            report = loom.verify(tree)
            assert report.ok, (k, report.broken[:3])
            now = state(loom, tree)
            if action == "delete":
                after = (before[0] - set(ids[2:]), before[1] - {f"main{k}"},
                         (f"k{k} q0", f"k{k} a1", f"k{k} side"))
            else:
                after = (before[0], before[1],
                         tuple("[redacted]" if t == f"k{k} q2 secret" else t for t in before[2]))
            assert now in (before, after), (k, now)
            gone = now == after
            if gone:
                lines = F.log(loom, tree=tree)
                assert [e["action"] for e in lines] == [action]
        if not killed:
            assert gone
            # kills landed inside the transaction and after its commit (the scrub)
            assert seen["before"] and seen["after"], seen
            return
        seen["after" if gone else "before"] += 1


def test_a_purge_from_the_trash_killed_at_any_statement_leaves_it_whole_or_gone(
        store_url: str) -> None:
    """A purge of a tree whose time in the trash is over, killed at each statement of
    its delete: the tree is whole and still in the trash, or gone with its trash row
    and its record line (the row goes in the delete's own transaction). Once a kill
    finds it gone, the rest land after the commit (the scrub): the rounds stop there.
    The checking store stays open across rounds (the killed writer opens its own)."""
    from loomdb.forget import trash as T

    whole = 0
    with loomdb.open(store_url) as loom:
        for k in range(1, 400):
            ids = thread(loom, [f"p{k} q0", f"p{k} a1"], session=f"p{k}")
            tree = loom.resolve(ids[0]).tree
            T.put(loom, tree, rule="retention 1d")
            loom.backend.execute("UPDATE trash SET purge_after = '2000-01-01T00:00:00Z'")
            before = state(loom, tree)
            killed = killed_at(store_url, k, lambda lm: T.purge_due(lm))
            now = state(loom, tree)
            aside = tree in T.trashed(loom)
            if now == before:
                assert killed and aside and not F.log(loom, tree=tree), k
                assert loom.verify(tree).ok
                T.restore(loom, tree)  # (the next round makes its own tree)
                whole += 1
                continue
            assert now == (frozenset(), frozenset(), ()) and not aside, (k, now)
            assert [e["action"] for e in F.log(loom, tree=tree)] == ["retention"]
            assert loom.verify().ok and whole >= 10, (k, whole)
            return
    raise AssertionError("the purge never finished")
