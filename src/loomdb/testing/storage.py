"""The storage conformance suite: each area store of a `Backend` (`backend.trees`,
`backend.nodes`, `backend.refs`...), called directly, behaves the same on every
backend (the library's own tests cover them again through the Loom), and a
transaction belongs to its thread.

A mixin, as dulwich's `ObjectStoreTests` is: a backend's test class subclasses it with
`unittest.TestCase` and gives `make_store`, a fresh, empty store. The suite migrates
it, runs each test on its own store, and closes it. Plain asserts and unittest's
cleanups only, so it needs no test runner beyond the standard library.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..api import Loom
from ..blobs import BlobStore
from ..errors import InvalidInput
from ..model import RefMove, Tree
from ..store.base import Backend
from ..store.blobmeta import BlobMeta, BlobMetaStore
from ..store.drafts import DraftStore
from ..store.forget import ForgetStore
from ..store.nodes import SHAPE_HEAD, EdgeStore, NodeStore
from ..store.overlay import MetaStore
from ..store.provenance import Compaction, Generation, ProvenanceStore
from ..store.refs import RefStore
from ..store.runner import SqlRunner
from ..store.trees import TreeStore

AT = "2026-01-01T00:00:00.000Z"
HASH = "sha256:" + "ab" * 32
#: how long a test waits for the other thread's step (it never needs to: a bound)
WAIT = 30.0


def tree(tid: str, title: str = "t") -> Tree:
    return Tree(id=tid, title=title, mode="dialogue", created_at=AT, updated_at=AT)


@contextmanager
def refused(kind: type[BaseException]) -> Iterator[None]:
    """The block must raise `kind` (pytest.raises without pytest)."""
    try:
        yield
    except kind:
        return
    raise AssertionError(f"expected {kind.__name__}, nothing was raised")


class StorageConformance:
    """Mix into a `unittest.TestCase` and give `make_store`; each `test_*` gets a
    fresh store as `self.backend` (migrated) and `self.blobs`."""

    backend: Backend
    blobs: BlobStore
    addCleanup: Callable[..., None]  # from unittest.TestCase  # noqa: N815

    def make_store(self) -> tuple[Backend, BlobStore]:
        """A fresh, empty store: its backend and blob store (as `store.open_store`
        returns them). Clean up what it makes with `self.addCleanup`."""
        raise NotImplementedError("give the backend under test: make_store()")

    def setUp(self) -> None:  # noqa: N802 (unittest's name)
        self.backend, self.blobs = self.make_store()
        self.addCleanup(self.backend.close)
        self.backend.migrate()

    def loom(self) -> Loom:
        """The front door over the store under test (for what needs nodes written)."""
        return Loom(self.backend, self.blobs)

    # == the composition ============================================================
    def test_the_backend_is_its_area_stores_over_one_runner(self) -> None:
        b = self.backend
        stores = {"trees": TreeStore, "nodes": NodeStore, "edges": EdgeStore,
                  "meta": MetaStore, "refs": RefStore, "provenance": ProvenanceStore,
                  "drafts": DraftStore, "blob_meta": BlobMetaStore, "forget": ForgetStore}
        for name, interface in stores.items():
            assert isinstance(getattr(b, name), interface), f"backend.{name} is no {interface.__name__}"
        assert isinstance(b.runner, SqlRunner)
        with b.transaction():
            assert not b.committed() and not b.runner.committed()
            with b.transaction():  # a nested one joins
                b.trees.insert_tree(tree("T1"))
        assert b.committed() and b.trees.get_tree("T1") is not None

    # == trees ======================================================================
    def test_trees_round_trip_list_update_prefix(self) -> None:
        b = self.backend
        with b.transaction():
            b.trees.insert_tree(tree("T1", "one"))
            b.trees.insert_tree(tree("T2", "two"))
        got = b.trees.get_tree("T1")
        assert got is not None and (got.title, got.nodes, got.options) == ("one", 0, {})
        with b.transaction():
            b.trees.update_tree("T1", {"title": "uno", "archived_at": AT})
        again = b.trees.get_tree("T1", stats=False)
        assert again is not None and again.title == "uno"
        assert [t.id for t in b.trees.list_trees()] == ["T2"]
        assert [t.id for t in b.trees.list_trees(archived=True)] == ["T1"]
        assert b.trees.tree_ids_with_prefix("T", 10) == ["T1", "T2"]
        assert b.trees.get_tree("nope") is None

    def test_trees_an_unknown_field_is_refused(self) -> None:
        with refused(InvalidInput):
            self.backend.trees.update_tree("T1", {"mode": "buffer"})

    # == nodes =====================================================================
    def test_tree_shape_is_every_node_by_creation_with_the_head_of_its_content(self) -> None:
        lm = self.loom()
        tree, root = lm.new_tree("first words " * 40)
        reply = lm.append(root.id, "a reply", role="assistant")
        again = lm.append(root.id, "a reply", role="assistant")  # the same content, stored once
        edited = lm.edit(reply.id, "an edited reply")
        rows = self.backend.nodes.tree_shape(tree.id)
        assert [r[:6] for r in rows] == [
            (root.id, None, root.id, None, "user", "message"),
            (reply.id, root.id, reply.id, None, "assistant", "message"),
            (again.id, root.id, again.id, None, "assistant", "message"),
            (edited.id, root.id, reply.id, reply.id, "assistant", "message"),
        ]
        heads = [r[6].decode() if isinstance(r[6], bytes) else r[6] for r in rows]
        assert heads[0] is not None and heads[0].startswith('[{"text":"first words first')
        assert len(heads[0]) == SHAPE_HEAD  # only the head of a long content
        assert heads[1] == heads[2] == '[{"text":"a reply","type":"text"}]'
        assert self.backend.nodes.tree_shape("no such tree") == []

    # == overlay ====================================================================
    def test_overlay_meta_tags_and_flags(self) -> None:
        b = self.backend
        ids = [f"N{i:04d}" for i in range(1000)]  # more than one SQLite chunk
        with b.transaction():
            for nid in ids:
                b.meta.set_meta(nid, "T", {"pruned": 1})
            b.meta.set_meta("N0001", "T", {"label": "x", "bookmarked": 1})
            b.meta.add_tags("N0001", "T", ["b", "a", "a"])
            b.meta.add_tags("N0999", "T", ["z"])
            b.meta.remove_tags("N0001", ["b", "missing"])
        meta = b.meta.get_meta([*ids, "absent"])
        assert len(meta) == 1000 and "absent" not in meta
        assert (meta["N0001"].label, meta["N0001"].bookmarked, meta["N0001"].tags) == (
            "x", True, ("a",))
        assert meta["N0999"].tags == ("z",) and meta["N0999"].pruned
        assert b.meta.flagged("T", "pruned") == set(ids)
        assert b.meta.flagged("T", "excluded") == set()
        with refused(InvalidInput):
            b.meta.set_meta("N0001", "T", {"chain_hash": "x"})
        with refused(InvalidInput):
            b.meta.flagged("T", "bookmarked")

    # == refs =======================================================================
    def test_refs_selections_log_names_and_delete(self) -> None:
        b = self.backend
        _, root = self.loom().new_tree("hi", session="main")
        with b.transaction():
            b.refs.set_selection("main", "S1", "V1")
            b.refs.set_selection("main", "S1", "V2")  # an upsert
            b.refs.set_selection("main", "S2", "V3")
            b.refs.set_selection("main", "S2", None)
            b.refs.log_move(RefMove(0, "main", AT, root.id, root.id, "t", "copied"))
            b.drafts.set_draft("main", "draft text", AT)
        ref = b.refs.get_ref("main")
        assert ref is not None and ref.selections == {"S1": "V2"}
        log = b.refs.ref_log("main")
        assert [m.seq for m in log] == list(range(1, len(log) + 1))
        assert log[-1].reason == "copied"
        assert b.refs.ref_names_like("mainly", 5) == ["main"]
        with b.transaction():
            b.refs.delete_ref("main")
        assert b.refs.get_ref("main") is None and b.drafts.get_draft("main") is None
        assert b.refs.ref_log("main") == log  # the log outlives the ref

    # == provenance, drafts, blobs ==================================================
    def test_provenance_and_blob_rows_round_trip(self) -> None:
        b = self.backend
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
        with b.transaction():
            b.provenance.insert_generation(gen)
            b.provenance.insert_compaction(comp)
            b.blob_meta.put_blob_meta(HASH, 12, "text/plain", AT)
            b.blob_meta.put_blob_meta(HASH, 99, "image/png", AT)  # known: kept as it was
        assert b.provenance.get_generation("G1") == gen
        assert b.provenance.get_compaction("N1") == comp
        assert b.provenance.get_generation("G2") is None and b.provenance.get_compaction("N2") is None
        assert b.blob_meta.get_blob_meta(HASH) == BlobMeta(12, "text/plain")
        assert b.blob_meta.get_blob_meta("sha256:" + "00" * 32) is None

    def test_drafts(self) -> None:
        b = self.backend
        with b.transaction():
            b.drafts.set_draft("s", "one", AT)
            b.drafts.set_draft("s", "two", AT)
        assert b.drafts.get_draft("s") == "two"
        with b.transaction():
            b.drafts.set_draft("s", "", AT)
        assert b.drafts.get_draft("s") is None

    # == threads ====================================================================
    def _other_thread(self, body: Callable[[threading.Event, threading.Event], Any]
                      ) -> tuple[threading.Thread, threading.Event, threading.Event]:
        """Start `body(inside, release)` in another thread; return once it is inside."""
        inside, release = threading.Event(), threading.Event()
        t = threading.Thread(target=body, args=(inside, release))
        t.start()
        self.addCleanup(t.join, WAIT)
        self.addCleanup(release.set)
        assert inside.wait(WAIT), "the other thread never got inside its transaction"
        return t, inside, release

    def test_a_transaction_is_its_threads_own(self) -> None:
        b = self.backend

        def writer(inside: threading.Event, release: threading.Event) -> None:
            with b.transaction():
                b.trees.insert_tree(tree("W"))
                inside.set()
                release.wait(WAIT)

        t, _, release = self._other_thread(writer)
        seen = [b.committed(), b.trees.get_tree("W")]  # no transaction here; not committed yet
        release.set()
        t.join(WAIT)
        assert seen == [True, None]
        assert b.trees.get_tree("W") is not None

    def test_a_rolled_back_write_is_never_seen(self) -> None:
        b = self.backend

        def writer(inside: threading.Event, release: threading.Event) -> None:
            try:
                with b.transaction():
                    b.trees.insert_tree(tree("R"))
                    inside.set()
                    release.wait(WAIT)
                    raise RuntimeError("roll back")
            except RuntimeError:
                pass

        t, _, release = self._other_thread(writer)
        assert b.trees.get_tree("R") is None
        release.set()
        t.join(WAIT)
        assert b.trees.get_tree("R") is None
