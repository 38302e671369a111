"""PostgreSQL ranks full-text hits from RUM indexes (Debian's postgresql-NN-rum, which
`make pg-up` installs): new entries wait in a GIN-indexed tail, sealed in bulk into
RUM-indexed chunks that merge by size (see search/chunks.py). Where the extension is
missing, ts_rank_cd over a GIN index finds the same hits; a store made that way gets
the chunks once the extension is there."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

import loomdb
from loomdb import Loom
from loomdb.search import SEARCH, chunks
from loomdb.search import index as I
from loomdb.search import postgres as P
from loomdb.search import service as S
from loomdb.storage_ops import storage
from pg import ADMIN_URL, store_of

#: "ember" said 1 to 6 times; the rest of the corpus never says it
EMBERS = ["ember " * k + "coal ash smoke" for k in range(1, 7)]


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    with psycopg.connect(ADMIN_URL) as admin:
        if admin.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'rum'"
                         ).fetchone() is None:
            pytest.fail("PostgreSQL's rum extension is not installed: `make pg-up` "
                        "installs it (Debian's postgresql-NN-rum)", pytrace=False)
    with store_of("postgres", str(tmp_path)) as found:
        yield found


def fill(url: str, *, without_rum: bool = False) -> None:
    """18 messages saying "ember" (each count thrice) and 60 that do not."""
    with loomdb.open(url) as lm:
        if without_rum:  # what a server without the extension leaves
            lm.backend.execute("INSERT INTO loomdb_migrations VALUES ('search/0002_rank', '')")
        lm.new_tree("kindling for the hearth", session="s")
        for i, text in enumerate(EMBERS * 3):
            lm.append("s", f"{text} filler{i} kindling", role="user")
        for i in range(60):
            lm.append("s", f"kindling number {i} and a log", role="assistant")


def ranking(url: str, text: str, limit: int = 100) -> list[tuple[str, float]]:
    """(message text, score) best first."""
    with loomdb.open(url) as lm:
        return [(lm.node(h["entity"]).content[0]["text"], h["score"])
                for h in S.search(lm, S.Query(text, limit=limit))]


def chunk_sizes(lm: Loom) -> list[int]:
    with lm.unit(SEARCH) as db:
        return [n for (n,) in db.execute("SELECT entries FROM search_chunks ORDER BY id")]


def tail_size(lm: Loom) -> int:
    with lm.unit(SEARCH) as db:
        return int((db.one("SELECT count(*) FROM search_tail") or (0,))[0])


def tables(lm: Loom) -> set[str]:
    with lm.unit(SEARCH) as db:
        return {t for (t,) in db.execute(
            "SELECT tablename FROM pg_tables WHERE tablename LIKE 'search_chunk\\_%'")}


def test_the_tail_is_sealed_into_chunks_and_chunks_of_a_tier_merge(url: str) -> None:
    fill(url)
    before = ranking(url, "ember")
    assert [t.count("ember") for t, _ in before[:3]] == [6, 6, 6]
    with loomdb.open(url) as lm:
        assert tail_size(lm) == 79 and chunk_sizes(lm) == []
        assert chunks.maintain(lm, seal=100) == 0  # under the bound: nothing to seal
        assert chunks.maintain(lm, seal=20) == 1
        assert tail_size(lm) == 0 and chunk_sizes(lm) == [79]
        with lm.unit(SEARCH) as db:  # emptied, not deleted from: no dead rows to visit
            assert db.one("SELECT pg_relation_size('search_tail')") == (0,)
    assert ranking(url, "ember") == before
    with loomdb.open(url) as lm:
        for round_ in range(3):  # three more chunks of one tier: four merge into one
            for i in range(20):
                lm.append("s", f"ember round {round_} number {i}", role="user")
            I.catch_up(lm)
            built = chunks.maintain(lm, seal=20)
        assert built == 2 and chunk_sizes(lm) == [79 + 60] and tail_size(lm) == 0
        assert len(tables(lm)) == 1  # the merged ones are dropped
    after = ranking(url, "ember", limit=1000)
    assert len(after) == 18 + 60 and after[:len(before)] == before


def test_each_chunk_hands_over_its_best_from_its_index_and_stops_at_the_limit(
    url: str,
) -> None:
    fill(url)
    with loomdb.open(url) as lm:
        I.catch_up(lm)
        with lm.unit(SEARCH) as db:  # a chunk the size where the plan matters
            db.execute("INSERT INTO search_entries (entity, kind, body) SELECT 'x' || i, "
                       "'message', 'ember and ' || i FROM generate_series(1, 20000) i")
        chunks.maintain(lm, seal=20)
        with lm.unit(SEARCH) as db:
            names = chunks.chunk_tables(db)
            sql, args = P.query("ember", S.Query("ember"), None, 3, names)
            plan = "\n".join(r[0] for r in db.execute("EXPLAIN " + sql, args))
            db.execute("DELETE FROM search_entries WHERE entity LIKE 'x%'")
        assert names[0] == "search_tail" and len(names) == 2
        assert f"Index Scan using {names[1]}_rank" in plan and "Order By" in plan
        assert "Sort Key: (c.tsv <=>" not in plan.split(names[1])[-1]
        assert chunk_sizes(lm) == [20079] and tail_size(lm) == 0  # as built: picks tiers
    best = ranking(url, "ember", limit=18)  # the deleted ones are gone from the chunk
    assert len(best) == 18 and best[0][0].count("ember") == 6
    assert [s for _, s in best] == sorted((s for _, s in best), reverse=True)


def test_a_deleted_entry_leaves_the_tail_and_every_chunk(url: str) -> None:
    with loomdb.open(url) as lm:
        I.put_entry(lm, "doc:a@1", "document", "ember in a sealed chunk")
        chunks.maintain(lm, seal=1)
        I.put_entry(lm, "doc:a@2", "document", "ember in the tail")
        assert {h["entity"] for h in S.search(lm, S.Query("ember"))} == {"doc:a@1", "doc:a@2"}
        I.delete_entries(lm, "doc:a@")
        assert S.search(lm, S.Query("ember")) == []
        with lm.unit(SEARCH) as db:
            assert [db.one(f"SELECT count(*) FROM {t}") for t in chunks.chunk_tables(db)] == [
                (0,), (0,)]


def test_filters_apply_in_the_tail_and_in_the_chunks(url: str) -> None:
    fill(url)
    with loomdb.open(url) as lm:
        chunks.maintain(lm, seal=20)
        lm.append("s", "ember from the assistant", role="assistant", author="bot")
        hits = S.search(lm, S.Query("ember", role="assistant"))
        assert [lm.node(h["entity"]).content[0]["text"] for h in hits] == [
            "ember from the assistant"]
        assert len(S.search(lm, S.Query("kindling", role="assistant", limit=1000))) == 60
        assert S.search(lm, S.Query("ember", author="nobody")) == []


def test_without_the_extension_gin_finds_the_same_hits_in_the_same_order(
    url: str, tmp_path: Path,
) -> None:
    fill(url)
    with store_of("postgres", str(tmp_path / "gin")) as gin_url:
        fill(gin_url, without_rum=True)
        with loomdb.open(gin_url) as lm, lm.unit(SEARCH) as db:
            assert db.one("SELECT to_regclass('search_chunks')") == (None,)
        for q in ["ember", "kindling", "kindling log", "ember coal", "nothing here"]:
            with_gin, with_rum = ranking(gin_url, q), ranking(url, q)
            assert sorted(t for t, _ in with_gin) == sorted(t for t, _ in with_rum), q
        # one word: both rank by how often a message says it
        for ranked in (ranking(url, "ember"), ranking(gin_url, "ember")):
            counts = [t.count("ember") for t, _ in ranked]
            assert counts == sorted(counts, reverse=True)


def test_a_store_made_without_the_extension_gets_the_chunks_with_its_hits_kept(
    url: str,
) -> None:
    fill(url, without_rum=True)
    before = ranking(url, "ember")
    with loomdb.open(url) as lm:
        assert chunks.enable(lm) and chunks.enable(lm)  # once the extension is there
        lm.append("s", "one more ember after the upgrade", role="user")
        assert tail_size(lm) == 79  # every entry moved to the tail
        assert len(S.search(lm, S.Query("ember", limit=100))) == 19
        assert tail_size(lm) == 80 and chunks.maintain(lm, seal=50) == 1
    after = ranking(url, "ember")
    assert sorted(t for t, _ in after) == sorted(
        [t for t, _ in before] + ["one more ember after the upgrade"])


def test_a_search_during_seals_and_merges_sees_every_entry_once(url: str) -> None:
    """Publishing a chunk waits for readers of the chunk list and readers wait for it:
    no search sees an entry both in the tail and in a chunk, or in neither."""
    fill(url)
    stop, seen, errors, rewrites = threading.Event(), [], [], []

    def reader() -> None:
        try:
            with loomdb.open(url) as lm:
                while not stop.is_set():
                    seen.append(len(S.search(lm, S.Query("ember", limit=1000))))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def writer() -> None:
        """Re-indexes one entity again and again: a delete, then an insert."""
        try:
            with loomdb.open(url) as lm:
                while not stop.is_set():
                    with storage(lm).transaction():
                        I.put_entry(lm, "doc:w@1", "document", "kindling rewritten")
                        I.put_entry(lm, f"doc:w@{len(rewrites) + 2}", "document", "log")
                    rewrites.append(1)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=reader), threading.Thread(target=writer)]
    for thread in threads:
        thread.start()
    try:
        with loomdb.open(url) as lm:
            for _ in range(8):
                chunks.maintain(lm, seal=5)
                for i in range(5):
                    I.put_entry(lm, f"doc:x{len(seen)}-{i}", "document", "kindling only")
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert not errors and seen and set(seen) == {18} and rewrites
