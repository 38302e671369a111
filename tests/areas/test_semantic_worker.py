"""Embeddings behind the writes, on both backends: a semantic or hybrid query over a
store with an unembedded backlog embeds exactly one text (its own), answers over what
is embedded and says how many entries are pending; full text finds the rest; the
worker drains the backlog in batches (counts, not times)."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loomdb import Loom
from loomdb.search import service as S
from loomdb.search.semantic import index as V
from loomdb.search.semantic import model as M
from loomdb.search.semantic.worker import EmbeddingWorker, embedding_worker

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from live import serve_command  # noqa: E402

pytestmark = pytest.mark.semantic

TEXTS = ["The automobile engine would not turn over this morning.",
         "Our kitten sleeps on the windowsill all afternoon.",
         "Quarterly revenue grew by ten percent.",
         "Knead the dough and let the bread rise overnight.",
         "The violinist tuned her instrument before the concert."]


@pytest.fixture
def embedded(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every text the model embeds, in this test (the query's and the index's)."""
    texts: list[str] = []
    real = M.embed

    def counting(batch: list[str], *args: Any, **kw: Any) -> Any:
        texts.extend(batch)
        return real(batch, *args, **kw)

    monkeypatch.setattr(M, "embed", counting)
    monkeypatch.setattr(V, "embed", counting)
    yield texts


def backlog(loom: Loom) -> None:
    """A store whose semantic area exists and whose messages are not embedded."""
    loom.new_tree(TEXTS[0], session="s")
    S.search(loom, S.Query("warm up", mode="semantic"))  # the area: nothing to embed yet
    for text in TEXTS[1:]:
        loom.append("s", text, role="user")


def test_a_query_embeds_only_its_own_text(loom: Loom, embedded: list[str]) -> None:
    backlog(loom)
    embedded.clear()
    hits = S.search(loom, S.Query("a sleepy cat", mode="semantic"))
    assert embedded == ["a sleepy cat"]
    assert hits.pending == len(TEXTS) and hits.answer()["pending"] == len(TEXTS)
    assert [h for h in hits if "kitten" in h["snippet"]] == []  # not embedded: not ranked
    fused = S.search(loom, S.Query("kitten windowsill", mode="hybrid"))
    assert embedded == ["a sleepy cat", "kitten windowsill"]
    top = fused[0]  # full text found it: the match marked by its span
    assert fused.pending == len(TEXTS)
    assert [top["snippet"][a:b] for a, b in top["marks"]][0] == "kitten"
    assert S.search(loom, S.Query("kitten")).pending is None  # full text has no backlog
    assert "pending" not in S.search(loom, S.Query("kitten")).answer()
    assert V.status(loom) == {"embedded": 0, "total": len(TEXTS), "pending": len(TEXTS)}


def test_a_users_query_is_not_told_the_stores_backlog(loom: Loom) -> None:
    """`pending` counts the whole store's entries: a user's answer leaves it out (it
    would tell how much others wrote lately); the operator's has it."""
    from loomdb.search.storage import Scope

    backlog(loom)
    mine = Scope(trees=frozenset({loom.trees()[0].id}))
    for mode in ("semantic", "hybrid"):
        assert S.search(loom, S.Query("a sleepy cat", mode=mode), mine).pending is None
        assert "pending" not in S.search(loom, S.Query("cat", mode=mode), mine).answer()
        assert S.search(loom, S.Query("a sleepy cat", mode=mode)).pending == len(TEXTS)


def test_the_worker_drains_the_backlog_in_batches(loom: Loom, embedded: list[str]) -> None:
    backlog(loom)
    worker = EmbeddingWorker(loom, batch=2)
    assert worker.step() == 2
    assert V.status(loom) == {"embedded": 2, "total": len(TEXTS), "pending": 3}
    assert worker.drain() == 3 and worker.embedded == len(TEXTS)
    assert sorted(embedded) == sorted(["warm up", *TEXTS])  # each text once
    embedded.clear()
    hits = S.search(loom, S.Query("a sleepy cat", mode="semantic", limit=1))
    assert embedded == ["a sleepy cat"] and hits.pending == 0
    assert "kitten" in hits[0]["snippet"]
    loom.append("s", "A thunderstorm is coming tonight.", role="user")
    assert V.status(loom)["pending"] == 1  # queued for full text: the worker indexes it first
    assert worker.drain() == 1 and V.status(loom)["pending"] == 0


def test_a_store_without_the_area_is_left_alone(loom: Loom, embedded: list[str]) -> None:
    """The worker never makes the semantic area (nor loads the model) by itself."""
    from loomdb.search.semantic import SEMANTIC

    loom.new_tree(TEXTS[0], session="s")
    assert EmbeddingWorker(loom).drain() == 0
    assert not loom.has_area(SEMANTIC) and embedded == []


def test_the_worker_thread_embeds_behind_the_writes(loom: Loom, embedded: list[str]) -> None:
    backlog(loom)
    done = threading.Event()
    real = V.embed_batch

    def watched(lm: Loom, n: int = 64) -> int:
        got = real(lm, n)
        if V.status(lm)["pending"] == 0:
            done.set()
        return got

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(V, "embed_batch", watched)
        with embedding_worker(loom, interval=0.05) as worker:
            assert done.wait(120), V.status(loom)
        assert worker.embedded == len(TEXTS)
    assert V.status(loom) == {"embedded": len(TEXTS), "total": len(TEXTS), "pending": 0}
    hits = S.search(loom, S.Query("company earnings increased", mode="semantic", limit=1))
    assert hits[0]["snippet"] == TEXTS[2] and hits.pending == 0


def test_loomdb_serve_embeds_the_backlog_behind_the_writes(tmp_path: Path) -> None:
    """A real `loomdb serve` process runs the worker: the status route shows the backlog
    going to nothing, with no query asking for it (SQLite: the command's wiring, which no
    backend changes; the worker over both backends is tested above)."""
    import loomdb

    store = str(tmp_path / "store")
    with loomdb.open(store) as lm:
        backlog(lm)
    env = {**os.environ, "PYTHONPATH": str(Path(loomdb.__file__).parent.parent)}
    deadline = time.monotonic() + 180
    seen: list[dict[str, int]] = []
    with serve_command(store, env) as (proc, http):
        while not seen or seen[-1]["pending"]:
            seen.append(http.get("/api/search/status").json())
            assert proc.poll() is None and time.monotonic() < deadline, seen
            time.sleep(0.2)  # (a poll of the status, bounded by the deadline)
        hits = http.get("/api/search", params={"q": "a sleepy cat", "mode": "semantic",
                                               "limit": 1}).json()
    assert seen[-1] == {"embedded": len(TEXTS), "total": len(TEXTS), "pending": 0}
    assert hits["pending"] == 0 and "kitten" in hits["hits"][0]["snippet"]
