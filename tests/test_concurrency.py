"""Concurrent writers, as real processes, on every backend (MODEL.md invariant 6).

Eight processes each open their own Loom on the same store URL and append at once:
  * to one session with policy `retry`: every append lands, the session's path holds
    all of them in one chain, the tree has one leaf;
  * to one session with policy `fail` (each writer reads the head, then appends
    expecting it): every refusal is a RefConflict, every accepted node is on the
    path, accepted + refused = all attempts, one leaf, and a refusal wrote nothing;
  * to eight different sessions of one tree: each session holds exactly its own nodes.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
from typing import Any

import pytest

import loomdb
from loomdb import Loom
from loomdb.errors import RefConflict

WRITERS = 8
APPENDS = int(os.environ.get("LOOMDB_TEST_APPENDS", "200"))
TIMEOUT = 600  # seconds for a whole run; a hang fails the test instead of blocking CI

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("concurrency")]


def _writer(url: str, session: str, tag: str, n: int, policy: str, start: Any, out: Any) -> None:
    """One process: open the store, wait for the others, append n times, report."""
    accepted: list[str] = []
    refused = 0
    try:
        with loomdb.open(url) as loom:
            start.wait(timeout=120)
            for i in range(n):
                role = "assistant" if i % 2 else "user"
                if policy == "retry":
                    accepted.append(loom.append(session, f"{tag} {i}", role=role).id)
                    continue
                head = loom.resolve(session)  # read the head, then append expecting it
                try:
                    accepted.append(loom.append(head, f"{tag} {i}", role=role, policy="fail").id)
                except RefConflict:
                    refused += 1
        out.put((tag, accepted, refused, None))
    except BaseException as exc:  # reported to the test, which fails on it
        out.put((tag, accepted, refused, f"{type(exc).__name__}: {exc}"))


def _run(url: str, jobs: list[tuple[str, str, int, str]]) -> dict[str, tuple[list[str], int]]:
    """Start one process per job at once; collect (accepted ids, refused count) per tag."""
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(len(jobs))
    out = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(url, s, tag, n, pol, start, out))
             for s, tag, n, pol in jobs]
    for p in procs:
        p.start()
    results: dict[str, tuple[list[str], int]] = {}
    errors: list[str] = []
    try:
        for _ in procs:
            tag, accepted, refused, error = out.get(timeout=TIMEOUT)
            results[tag] = (accepted, refused)
            if error:
                errors.append(f"{tag}: {error}")
    except queue.Empty:
        errors.append(f"writers did not finish within {TIMEOUT}s")
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
    assert not errors, errors
    return results


def _texts(loom: Loom, ids: list[str]) -> list[str]:
    return [n.content[0]["text"] for n in loom.nodes(ids)]


class TestOneSessionManyWriters:
    def test_with_retry_every_append_lands_in_one_chain(self, store_url: str) -> None:
        with loomdb.open(store_url) as loom:
            tree, root = loom.new_tree("shared", session="main")
        jobs = [("main", f"w{i}", APPENDS, "retry") for i in range(WRITERS)]
        results = _run(store_url, jobs)
        with loomdb.open(store_url) as loom:
            path = loom.path("main")
            accepted = [nid for ids, _ in results.values() for nid in ids]
            assert len(accepted) == len(set(accepted)) == WRITERS * APPENDS
            assert path[0] == root.id and len(path) == 1 + WRITERS * APPENDS
            assert set(path[1:]) == set(accepted)
            for ids, _ in results.values():  # each writer's own appends in its order
                assert sorted(ids, key=path.index) == ids
            assert loom.leaves(tree.id) == [path[-1]] == [loom.ref("main").node]
            assert loom.tree(tree.id).nodes == 1 + WRITERS * APPENDS
            assert len([m for m in loom.ref_log("main") if m.old and m.new]) == WRITERS * APPENDS
            assert loom.verify(tree.id).ok

    def test_with_fail_every_refusal_is_a_conflict_and_nothing_forks(
        self, store_url: str
    ) -> None:
        with loomdb.open(store_url) as loom:
            tree, root = loom.new_tree("shared", session="main")
        jobs = [("main", f"w{i}", APPENDS, "fail") for i in range(WRITERS)]
        results = _run(store_url, jobs)  # any error other than RefConflict fails here
        with loomdb.open(store_url) as loom:
            accepted = [nid for ids, _ in results.values() for nid in ids]
            refused = sum(r for _, r in results.values())
            assert len(accepted) + refused == WRITERS * APPENDS
            assert accepted, "no append was accepted"
            path = loom.path("main")
            assert path == [root.id, *sorted(accepted, key=path.index)]
            assert set(path[1:]) == set(accepted)
            assert loom.leaves(tree.id) == [path[-1]]
            assert loom.tree(tree.id).nodes == 1 + len(accepted)  # a refusal wrote nothing
            assert loom.verify(tree.id).ok


class TestManySessionsOneTree:
    def test_writers_on_different_sessions_do_not_interfere(self, store_url: str) -> None:
        with loomdb.open(store_url) as loom:
            tree, root = loom.new_tree("shared")
            for i in range(WRITERS):
                loom.fork(root.id, f"s{i}")
        jobs = [(f"s{i}", f"w{i}", APPENDS, "retry") for i in range(WRITERS)]
        results = _run(store_url, jobs)
        with loomdb.open(store_url) as loom:
            heads = []
            for i in range(WRITERS):
                ids, refused = results[f"w{i}"]
                assert refused == 0 and len(ids) == APPENDS
                assert loom.path(f"s{i}") == [root.id, *ids]
                assert _texts(loom, ids) == [f"w{i} {k}" for k in range(APPENDS)]
                heads.append(ids[-1])
            assert sorted(loom.leaves(tree.id)) == sorted(heads)
            assert loom.tree(tree.id).nodes == 1 + WRITERS * APPENDS
            assert loom.verify(tree.id).ok
