"""Context assembly into the normalized schema (seed 002)."""

from __future__ import annotations

from helpers import texts_of, thread
from loomdb import Loom
from loomdb.context import deep_merge


class TestNormalizedShape:
    def test_messages_hold_role_and_content_blocks(self, loom: Loom) -> None:
        thread(loom, ["hi", "hello"])
        assert loom.context("main") == {
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
            ],
            "options": {},
        }

    def test_the_system_context_leads(self, loom: Loom) -> None:
        loom.new_tree("hi", system="You are terse.", session="s")
        first = loom.context("s")["messages"][0]
        assert first == {"role": "system", "content": [{"type": "text", "text": "You are terse."}]}

    def test_cache_flags_travel_with_their_message(self, loom: Loom) -> None:
        thread(loom, ["q"])
        loom.append("main", "long doc", cache=True)
        assert [m.get("cache", False) for m in loom.context("main")["messages"]] == [False, True]


class TestOptions:
    def test_options_deep_merge_tree_then_path_then_call(self, loom: Loom) -> None:
        loom.new_tree("q", options={"provider_ptr": "nano", "servers": ["fs"],
                                    "model": {"temperature": 0.1, "top_p": 1}}, session="s")
        loom.append("s", "a", role="assistant", options={"model": {"temperature": 0.5}})
        loom.append("s", "q2", options={"search": True})
        ctx = loom.context("s", {"provider_ptr": "mega"})
        assert ctx["options"] == {"provider_ptr": "mega", "servers": ["fs"],
                                  "model": {"temperature": 0.5, "top_p": 1}, "search": True}

    def test_lists_are_replaced_not_merged(self) -> None:
        assert deep_merge({"servers": ["a"]}, {"servers": ["b"]}) == {"servers": ["b"]}


class TestWhatEntersTheContext:
    def test_excluded_nodes_are_left_out(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a", "q2"])
        loom.exclude(ids[1])
        assert texts_of(loom, "main") == ["q", "q2"]

    def test_annotation_edges_never_enter(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a", "q2"])
        note = loom.append(ids[0], "a private note", role="user")
        loom.link(ids[1], note.id, type="annotation")
        assert texts_of(loom, "main") == ["q", "a", "q2"]

    def test_link_edges_cross_trees_and_never_enter(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a"])
        _, other = loom.new_tree("elsewhere")
        edge = loom.link(ids[1], other.id, type="link")
        assert edge.target == other.id
        assert [e.id for e in loom.edges(other.id)] == [edge.id]
        assert texts_of(loom, "main") == ["q", "a"]

    def test_extra_sources_of_a_multi_source_edge_come_in_before_their_node(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a"])
        loom.fork(ids[0], "side")
        note = loom.append("side", "side material", role="assistant")
        loom.append("main", "combine", also=[note.id])
        assert texts_of(loom, "main") == ["q", "a", "side material", "combine"]

    def test_a_source_already_on_the_path_is_not_repeated(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a"])
        loom.append("main", "again", also=[ids[0]])
        assert texts_of(loom, "main") == ["q", "a", "again"]

    def test_the_latest_compaction_replaces_what_it_summarized(self, loom: Loom) -> None:
        ids = thread(loom, ["t1", "t2", "t3", "t4", "t5"])
        loom.append("main", "summary of t1-t3", role="user", kind="compaction",
                    also=[ids[3], ids[4]])
        loom.append("main", "t6", role="assistant")
        assert texts_of(loom, "main") == ["summary of t1-t3", "t4", "t5", "t6"]
        assert texts_of(loom, ids[4]) == ["t1", "t2", "t3", "t4", "t5"]
