"""Storage conformance: each area interface of `Backend`, called directly, behaves the
same on every backend (the library-level suite covers them again through the Loom).
Transactions are per thread, and a store that stays locked is `StoreBusy`."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from loomdb import Loom, StoreBusy
from loomdb.errors import InvalidInput
from loomdb.model import RefMove, Tree
from loomdb.store import open_store
from loomdb.store.base import Backend
from loomdb.store.blobmeta import BlobMeta
from loomdb.store.provenance import Compaction, Generation

BACKENDS = [b for b in os.environ.get("LOOMDB_TEST_BACKENDS", "sqlite,postgres").split(",") if b]

AT = "2026-01-01T00:00:00.000Z"
HASH = "sha256:" + "ab" * 32


@pytest.fixture
def backend(store_url: str) -> Iterator[Backend]:
    store, _ = open_store(store_url)
    store.migrate()
    yield store
    store.close()


def _tree(tid: str, title: str = "t") -> Tree:
    return Tree(id=tid, title=title, mode="dialogue", created_at=AT, updated_at=AT)


class TestTrees:
    def test_round_trip_list_update_prefix(self, backend: Backend) -> None:
        with backend.transaction():
            backend.insert_tree(_tree("T1", "one"))
            backend.insert_tree(_tree("T2", "two"))
        got = backend.get_tree("T1")
        assert got is not None and (got.title, got.nodes, got.options) == ("one", 0, {})
        with backend.transaction():
            backend.update_tree("T1", {"title": "uno", "archived_at": AT})
        assert backend.get_tree("T1", stats=False).title == "uno"  # type: ignore[union-attr]
        assert [t.id for t in backend.list_trees()] == ["T2"]
        assert [t.id for t in backend.list_trees(archived=True)] == ["T1"]
        assert backend.tree_ids_with_prefix("T", 10) == ["T1", "T2"]
        assert backend.get_tree("nope") is None

    def test_an_unknown_field_is_refused(self, backend: Backend) -> None:
        with pytest.raises(InvalidInput):
            backend.update_tree("T1", {"mode": "buffer"})


class TestOverlay:
    def test_meta_tags_and_flags(self, backend: Backend) -> None:
        ids = [f"N{i:04d}" for i in range(1000)]  # more than one SQLite chunk
        with backend.transaction():
            for nid in ids:
                backend.set_meta(nid, "T", {"pruned": 1})
            backend.set_meta("N0001", "T", {"label": "x", "bookmarked": 1})
            backend.add_tags("N0001", "T", ["b", "a", "a"])
            backend.add_tags("N0999", "T", ["z"])
            backend.remove_tags("N0001", ["b", "missing"])
        meta = backend.get_meta([*ids, "absent"])
        assert len(meta) == 1000 and "absent" not in meta
        assert (meta["N0001"].label, meta["N0001"].bookmarked, meta["N0001"].tags) == (
            "x", True, ("a",))
        assert meta["N0999"].tags == ("z",) and meta["N0999"].pruned
        assert backend.flagged("T", "pruned") == set(ids)
        assert backend.flagged("T", "excluded") == set()
        with pytest.raises(InvalidInput):
            backend.set_meta("N0001", "T", {"chain_hash": "x"})
        with pytest.raises(InvalidInput):
            backend.flagged("T", "bookmarked")


class TestRefsShared:
    def test_selections_log_names_and_delete(self, loom: Loom) -> None:
        backend = loom.backend
        _, root = loom.new_tree("hi", session="main")
        with backend.transaction():
            backend.set_selection("main", "S1", "V1")
            backend.set_selection("main", "S1", "V2")  # an upsert
            backend.set_selection("main", "S2", "V3")
            backend.set_selection("main", "S2", None)
            backend.log_move(RefMove(0, "main", AT, root.id, root.id, "t", "copied"))
            backend.set_draft("main", "draft text", AT)
        assert backend.get_ref("main").selections == {"S1": "V2"}  # type: ignore[union-attr]
        log = backend.ref_log("main")
        assert [m.seq for m in log] == list(range(1, len(log) + 1))
        assert log[-1].reason == "copied"
        assert backend.ref_names_like("mainly", 5) == ["main"]
        with backend.transaction():
            backend.delete_ref("main")
        assert backend.get_ref("main") is None and backend.get_draft("main") is None
        assert backend.ref_log("main") == log  # the log outlives the ref


class TestProvenanceDraftsBlobs:
    def test_typed_rows_round_trip(self, backend: Backend) -> None:
        gen: Generation = {
            "id": "G1", "tree_id": "T", "created_at": AT, "provider": "p", "model": "m",
            "request": "{}", "provider_request": "{}", "raw_response": "{}",
            "response_hash": HASH, "usage": None, "latency_ms": 5, "status": "ok",
        }
        comp: Compaction = {
            "node_id": "N1", "tree_id": "T", "model": "m", "tokens_before": 10,
            "tokens_after": 3, "duration_ms": 7, "trigger": "manual", "summarized": 4,
            "created_at": AT,
        }
        with backend.transaction():
            backend.insert_generation(gen)
            backend.insert_compaction(comp)
            backend.put_blob_meta(HASH, 12, "text/plain", AT)
            backend.put_blob_meta(HASH, 99, "image/png", AT)  # known: kept as it was
        assert backend.get_generation("G1") == gen
        assert backend.get_compaction("N1") == comp
        assert backend.get_generation("G2") is None and backend.get_compaction("N2") is None
        assert backend.get_blob_meta(HASH) == BlobMeta(12, "text/plain")
        assert backend.get_blob_meta("sha256:" + "00" * 32) is None

    def test_drafts(self, backend: Backend) -> None:
        with backend.transaction():
            backend.set_draft("s", "one", AT)
            backend.set_draft("s", "two", AT)
        assert backend.get_draft("s") == "two"
        with backend.transaction():
            backend.set_draft("s", "", AT)
        assert backend.get_draft("s") is None


class TestThreads:
    def test_a_transaction_is_its_threads_own(self, backend: Backend) -> None:
        inside, release = threading.Event(), threading.Event()
        seen: list[object] = []

        def writer() -> None:
            with backend.transaction():
                backend.insert_tree(_tree("W"))
                inside.set()
                release.wait(30)

        t = threading.Thread(target=writer)
        t.start()
        assert inside.wait(30)
        seen.append(backend.committed())  # this thread has no transaction open
        seen.append(backend.get_tree("W"))  # not committed: invisible here
        release.set()
        t.join(30)
        assert seen == [True, None]
        assert backend.get_tree("W") is not None

    def test_a_rolled_back_write_is_never_seen(self, backend: Backend) -> None:
        inside, release = threading.Event(), threading.Event()

        def writer() -> None:
            try:
                with backend.transaction():
                    backend.insert_tree(_tree("R"))
                    inside.set()
                    release.wait(30)
                    raise RuntimeError("roll back")
            except RuntimeError:
                pass

        t = threading.Thread(target=writer)
        t.start()
        assert inside.wait(30)
        assert backend.get_tree("R") is None
        release.set()
        t.join(30)
        assert backend.get_tree("R") is None


def test_sqlite_locked_by_another_process_is_store_busy(tmp_path: Path) -> None:
    from loomdb.store.sqlite import SQLiteBackend

    file = tmp_path / "busy.db"
    backend = SQLiteBackend(file, timeout=0.2)
    backend.migrate()
    other = sqlite3.connect(file, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another writer holds the file
    try:
        with pytest.raises(StoreBusy), backend.transaction():
            backend.insert_tree(_tree("B"))
    finally:
        other.execute("ROLLBACK")
        other.close()
    with backend.transaction():  # and the store works again afterwards
        backend.insert_tree(_tree("B"))
    assert backend.get_tree("B") is not None
    backend.close()


@pytest.mark.postgres
@pytest.mark.skipif("postgres" not in BACKENDS, reason="PostgreSQL is not among LOOMDB_TEST_BACKENDS")
def test_postgres_without_a_free_connection_is_store_busy() -> None:
    from loomdb.store.postgres import PostgresBackend, split_url
    from pg import fresh_postgres_url

    with fresh_postgres_url() as url:
        backend = PostgresBackend(url, conninfo=split_url(url)[0], pool_size=1, timeout=0.3)
        backend.migrate()
        inside, release = threading.Event(), threading.Event()

        def holder() -> None:
            with backend.transaction():
                inside.set()
                release.wait(30)

        t = threading.Thread(target=holder)
        t.start()
        try:
            assert inside.wait(30)
            with pytest.raises(StoreBusy):
                backend.get_tree("x")
        finally:
            release.set()
            t.join(30)
        assert backend.get_tree("x") is None
        backend.close()
