"""MODEL.md's seven invariants, one class each, pinned by name."""

from __future__ import annotations

import multiprocessing

import pytest

from helpers import row_counts, texts_of, thread
from loomdb import InvalidInput, Loom, RefConflict


class TestInvariant1ContentIsImmutableAndStoredOnce:
    def test_same_blocks_have_the_same_id_and_one_row(self, loom: Loom) -> None:
        _, a = loom.new_tree("same words")
        _, b = loom.new_tree("same words")
        c = loom.append(a.id, "same words", role="assistant", author="model-x")
        assert a.content_id == b.content_id == c.content_id
        rows = loom.backend.execute("SELECT count(*) FROM contents")[0][0]
        assert rows == 1

    def test_a_regeneration_with_identical_text_shares_content(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "answer"])
        regen = loom.append(ids[0], "answer", role="assistant")
        assert regen.id != ids[1]
        assert loom.node(regen.id).content_id == loom.node(ids[1]).content_id

    def test_identity_ignores_who_wrote_it(self, loom: Loom) -> None:
        _, a = loom.new_tree("x", author="alice")
        _, b = loom.new_tree("x", author="bob", source="agent")
        assert a.content_id == b.content_id
        assert a.chain_hash != b.chain_hash


class TestInvariant2NodesAreImmutable:
    def test_editing_creates_a_new_node_and_keeps_the_old(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a1", "q2"])
        new = loom.edit(ids[1], "a1 fixed")
        assert new.id != ids[1] and new.edited_from == ids[1]
        assert loom.node(ids[1]).content[0]["text"] == "a1"

    def test_metadata_is_an_overlay_outside_the_hash(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a"])
        before = loom.node(ids[1]).chain_hash
        loom.tag(ids[1], "keep")
        loom.bookmark(ids[1], "best")
        loom.exclude(ids[1])
        loom.prune(ids[1])
        assert loom.node(ids[1]).chain_hash == before
        assert loom.verify().ok
        meta = loom.meta(ids[1])
        assert (meta.tags, meta.bookmarked, meta.label, meta.excluded, meta.pruned) == (
            ("keep",), True, "best", True, True)


class TestInvariant3NodeIdsAreImmutableAddresses:
    def test_a_node_id_resolves_to_the_same_path_whatever_happens_later(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a", "q2", "a2"])
        before_path = loom.path(ids[2])
        before_ctx = loom.context(ids[2])
        loom.append(ids[2], "another answer", role="assistant")
        loom.edit(ids[1], "edited")
        loom.fork(ids[0], "other")
        loom.append("other", "other branch", role="assistant")
        loom.set_ref("main", ids[0])
        loom.prune(ids[3])
        loom.tag(ids[1], "x")
        assert loom.path(ids[2]) == before_path
        assert loom.context(ids[2]) == before_ctx

    def test_excluded_is_the_one_deliberate_exception(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a", "q2"])
        loom.exclude(ids[1])
        assert texts_of(loom, ids[2]) == ["q", "q2"]
        loom.exclude(ids[1], on=False)
        assert texts_of(loom, ids[2]) == ["q", "a", "q2"]


class TestInvariant4ForkAndEditNeverCopy:
    def test_forking_is_one_ref_and_no_nodes(self, loom: Loom) -> None:
        ids = thread(loom, [f"m{i}" for i in range(20)])
        before = row_counts(loom)
        loom.fork(ids[10], "fork")
        after = row_counts(loom)
        assert after["nodes"] == before["nodes"]
        assert after["refs"] == before["refs"] + 1
        assert loom.path("fork") == ids[:11]

    def test_editing_node_k_adds_exactly_one_node(self, loom: Loom) -> None:
        ids = thread(loom, [f"m{i}" for i in range(30)])
        before = row_counts(loom)["nodes"]
        loom.edit(ids[5], "m5 edited")
        assert row_counts(loom)["nodes"] == before + 1

    def test_splice_view_runs_through_the_new_version_and_the_old_tail(self, loom: Loom) -> None:
        ids = thread(loom, ["t1", "t2", "t3", "t4", "t5"])
        new = loom.edit(ids[2], "t3'")
        loom.view("spliced", ids[4])
        loom.select("spliced", new.id)
        assert loom.path("spliced") == [ids[0], ids[1], new.id, ids[3], ids[4]]
        assert texts_of(loom, "spliced") == ["t1", "t2", "t3'", "t4", "t5"]
        assert loom.path("main") == ids


class TestInvariant5EveryNodeCarriesAChainHash:
    def test_chain_hash_covers_content_parents_time_and_author(self, loom: Loom) -> None:
        from loomdb.chain import chain_hash

        ids = thread(loom, ["q", "a"])
        root, child = loom.node(ids[0]), loom.node(ids[1])
        assert child.chain_hash == chain_hash(
            content_id=child.content_id, parents=[root.chain_hash], created_at=child.created_at,
            author=child.author, role=child.role, kind=child.kind, edited_from=None, options=None,
        )

    def test_verification_names_the_tampered_node_and_its_heirs(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a", "q2", "a2"])
        loom.backend.execute(f"UPDATE nodes SET author = 'mallory' WHERE id = {_lit(ids[1])}")
        report = loom.verify()
        broken = {b["node"]: b["reason"] for b in report.broken}
        assert "chain hash" in broken[ids[1]]
        assert broken[ids[2]] == f"inherits the break from {ids[1]}"
        assert broken[ids[3]] == f"inherits the break from {ids[1]}"
        assert ids[0] not in broken


def _lit(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _append_many(url: str, session: str, n: int) -> None:
    import loomdb

    with loomdb.open(url) as lm:
        for i in range(n):
            lm.append(session, f"{session}-{i}")


class TestInvariant6RefsMoveOnlyByCompareAndSwap:
    def test_a_stale_expectation_is_a_conflict(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a"])
        with pytest.raises(RefConflict) as err:
            loom.append("main", "late", expect=ids[0])
        assert err.value.expected == ids[0] and err.value.actual == ids[1]
        assert loom.ref("main").node == ids[1]

    def test_fail_policy_refuses_when_the_session_moved_since_it_was_read(self, loom: Loom) -> None:
        thread(loom, ["q", "a"])
        seen = loom.resolve("main")
        loom.append("main", "someone else")
        with pytest.raises(RefConflict):
            loom.append(seen, "mine", policy="fail")

    def test_concurrent_writers_never_fork_a_session(self, store_url: str) -> None:
        import loomdb

        with loomdb.open(store_url) as lm:
            tree, _ = lm.new_tree("start", session="main")
        ctx = multiprocessing.get_context("spawn")
        procs = [ctx.Process(target=_append_many, args=(store_url, "main", 25)) for _ in range(3)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(120)
            assert p.exitcode == 0
        with loomdb.open(store_url) as lm:
            assert len(lm.path("main")) == 76
            assert lm.leaves(tree.id) == [lm.ref("main").node]


class TestInvariant7EveryWriteIsOneTransaction:
    def test_a_failed_write_leaves_nothing(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a"])
        before = row_counts(loom)
        with pytest.raises(InvalidInput):
            loom.append("main", "x", role="assistant", options=[1])  # type: ignore[arg-type]
        assert row_counts(loom) == before
        assert loom.ref("main").node == ids[1]

    def test_a_crash_inside_a_transaction_rolls_everything_back(self, loom: Loom) -> None:
        thread(loom, ["q", "a"])
        before = row_counts(loom)
        with pytest.raises(RuntimeError):
            with loom.backend.transaction():
                loom.append("main", "inside")
                raise RuntimeError("power cut")
        assert row_counts(loom) == before
