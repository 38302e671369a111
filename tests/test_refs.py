"""Sessions, views and bookmarks: names, compare-and-swap moves, the ref log, undo."""

from __future__ import annotations

import pytest

import loomdb
from helpers import thread
from loomdb import InvalidInput, Loom, NotFound, RefConflict, RefMove


class TestNames:
    @pytest.mark.parametrize("bad", ["", "-x", "a b", "a~1", "a^", "x..y", "end/",
                                     "01ARZ3NDEKTSV4RRFFQ69G5FAV", "a" * 101])
    def test_bad_names_are_refused(self, loom: Loom, bad: str) -> None:
        with pytest.raises(InvalidInput):
            loom.new_tree("x", session=bad)

    def test_names_are_unique_across_kinds(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a"])
        with pytest.raises(InvalidInput, match="already exists"):
            loom.bookmark(ids[0], "main")
        with pytest.raises(InvalidInput, match="already exists"):
            loom.fork(ids[0], "main")


class TestSessions:
    def test_appending_through_a_session_moves_it_and_logs_the_move(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a"])
        log = loom.ref_log("main")
        assert [(m.old, m.new, m.reason) for m in log] == [
            (None, ids[0], "create session"), (ids[0], ids[1], "append assistant")]
        assert all(m.actor == "human" and m.at for m in log)

    def test_set_moves_by_compare_and_swap(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a", "q2"])
        loom.set_ref("main", ids[0], expect=ids[2])
        with pytest.raises(RefConflict):
            loom.set_ref("main", ids[1], expect=ids[2])
        assert loom.ref("main").node == ids[0]

    def test_undo_moves_back(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a", "q2"])
        loom.set_ref("main", ids[0])
        assert loom.undo("main").node == ids[2]
        assert loom.undo("main").node == ids[0]

    def test_a_session_cannot_move_to_another_tree(self, loom: Loom) -> None:
        thread(loom, ["q"])
        _, other = loom.new_tree("other")
        with pytest.raises(InvalidInput, match="belongs to tree"):
            loom.set_ref("main", other.id)

    def test_a_fork_copies_the_selections_it_was_made_with(self, loom: Loom) -> None:
        ids = thread(loom, ["1", "2", "3"])
        v = loom.edit("main~1", "2'")
        loom.fork("main", "copy")
        assert loom.path("copy") == [ids[0], v.id, ids[2]]

    def test_deleting_a_session_keeps_its_nodes_and_log(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a"])
        loom.delete_ref("main")
        with pytest.raises(NotFound):
            loom.ref("main")
        assert loom.path(ids[1]) == ids
        assert loom.ref_log("main")[-1].reason == "delete"


class TestBookmarks:
    def test_a_bookmark_is_a_fixed_headish_and_sets_the_overlay(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a", "q2"])
        loom.bookmark(ids[1], "good-answer")
        assert loom.resolve("good-answer").node == ids[1]
        assert loom.resolve("good-answer").session is None
        with pytest.raises(InvalidInput, match="fixed"):
            loom.set_ref("good-answer", ids[0])
        loom.append("good-answer", "branch here")
        assert loom.ref("good-answer").node == ids[1]

    def test_deleting_a_bookmark_clears_the_overlay(self, loom: Loom) -> None:
        ids = thread(loom, ["q"])
        loom.bookmark(ids[0], "b")
        loom.delete_ref("b")
        assert loom.meta(ids[0]).bookmarked is False


class TestViews:
    def test_select_applies_only_to_the_views_that_select(self, loom: Loom) -> None:
        ids = thread(loom, ["1", "2", "3"])
        v = loom.edit(ids[1], "2'")
        loom.view("a", ids[2])
        loom.view("b", ids[2])
        loom.select("a", v.id)
        assert loom.path("a")[1] == v.id
        assert loom.path("b")[1] == ids[1]

    def test_appending_through_a_view_does_not_move_it(self, loom: Loom) -> None:
        ids = thread(loom, ["1", "2"])
        loom.view("v", ids[1])
        n = loom.append("v", "3")
        assert loom.ref("v").node == ids[1]
        assert loom.path(n.id) == ids + [n.id]


class TestRefLog:
    def test_moves_are_numbered_per_ref_from_one(self, loom: Loom) -> None:
        thread(loom, ["q", "a", "q2"])
        loom.fork("main~1", "other")
        loom.append("other", "x")
        assert [m.seq for m in loom.ref_log("main")] == [1, 2, 3]
        assert [m.seq for m in loom.ref_log("other")] == [1, 2]


class TestTheLogLineIsTheCompareAndSwap:
    """A Loom appends from the session head it moved last, without reading it; the
    line `seq + 1` of the ref's log is the compare-and-swap that catches any change
    made since, by another Loom or process."""

    def test_a_stale_line_is_refused_and_writes_nothing(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a"])
        ref = loom.ref("main")
        stale = RefMove(ref.seq, "main", "2026-01-01T00:00:00.000000Z", ids[0], ids[1], "t", "x")
        with loom.backend.transaction():
            assert loom.backend.refs.move_ref(stale) is False
        assert loom.ref("main") == ref and len(loom.ref_log("main")) == ref.seq

    def test_an_append_after_another_writer_moved_the_session_chains_after_it(
        self, store_url: str
    ) -> None:
        with loomdb.open(store_url) as a, loomdb.open(store_url) as b:
            a.new_tree("q", session="main")
            first = a.append("main", "from a")          # a now remembers the head
            other = b.append("main", "from b")          # moved by someone else
            mine = a.append("main", "from a again")     # a's remembered line is taken
            assert mine.parent == other.id and other.parent == first.id
            assert a.path("main")[-3:] == [first.id, other.id, mine.id]
            assert a.leaves(a.node("main").tree) == [mine.id]

    def test_a_selection_made_elsewhere_reaches_the_next_append(self, store_url: str) -> None:
        with loomdb.open(store_url) as a, loomdb.open(store_url) as b:
            _, root = a.new_tree("q", session="main")
            answer = a.append("main", "answer", role="assistant")
            a.append("main", "follow-up")             # a remembers the session
            better = b.edit(answer.id, "a better answer")
            b.select("main", better.id)                # a selection: a new log line
            node = a.append("main", "after the selection")
            assert node.selections == {answer.id: better.id}
            assert b.path(node.id)[:2] == [root.id, better.id]
            assert b.path("main")[1] == better.id

    def test_a_deleted_and_recreated_session_is_not_appended_to_blindly(
        self, store_url: str
    ) -> None:
        with loomdb.open(store_url) as a, loomdb.open(store_url) as b:
            _, root = a.new_tree("q", session="main")
            a.append("main", "one")
            b.delete_ref("main")
            b.fork(root.id, "main")                    # same name, elsewhere
            node = a.append("main", "two")
            assert node.parent == root.id
            # the log is the new session's own (the earlier one's lines are not shown)
            assert [m.reason for m in b.ref_log("main")] == ["create session", "append user"]
