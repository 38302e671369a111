"""Seed 000's use cases 3 (parallel models + chaining), 4 (fork) and 5 (edit & splice)."""

from __future__ import annotations

from helpers import texts_of, thread
from loomdb import Loom


class TestUseCase3ParallelModelsAndChaining:
    def test_alternatives_are_sibling_spans_and_the_chain_continues_from_the_chosen_one(
        self, loom: Loom
    ) -> None:
        _, q = loom.new_tree("Plan a trip", session="main")
        # Alt A (claude): thinking -> tool_use -> tool_result -> response (a 4-message span)
        a1 = loom.append(q.id, [{"type": "thinking", "thinking": "check weather"},
                                {"type": "tool_use", "id": "t1", "name": "weather",
                                 "input": {"city": "Oslo"}}], role="assistant", author="claude")
        a2 = loom.append(a1.id, [{"type": "tool_result", "tool_use_id": "t1",
                                  "content": [{"type": "text", "text": "rain"}]}], role="tool")
        a3 = loom.append(a2.id, "Pack an umbrella.", role="assistant", author="claude")
        # Alt B (gpt): a single response; Alt C (gemini): tool span of 3
        b1 = loom.append(q.id, "Go to Rome.", role="assistant", author="gpt")
        c1 = loom.append(q.id, [{"type": "tool_use", "id": "t2", "name": "search",
                                 "input": {"q": "trips"}}], role="assistant", author="gemini")
        assert loom.children(q.id) == [a1.id, b1.id, c1.id]
        assert loom.siblings(b1.id) == [a1.id, c1.id]
        assert loom.branch_points(q.tree) == [q.id]
        # the user selects Alt A and the chain continues from its last message
        loom.set_ref("main", a3.id)
        t4 = loom.append("main", "Thanks, and hotels?")
        assert loom.path("main") == [q.id, a1.id, a2.id, a3.id, t4.id]
        roles = [m["role"] for m in loom.context("main")["messages"]]
        assert roles == ["user", "assistant", "tool", "assistant", "user"]


class TestUseCase4ForkConversation:
    def test_a_fork_shares_the_prefix_and_diverges(self, loom: Loom) -> None:
        ids = thread(loom, ["T1", "T2", "T3", "T4", "T5"])
        loom.fork(ids[2], "forked")
        f4 = loom.append("forked", "F4", role="assistant")
        f5 = loom.append("forked", "F5")
        assert loom.path("forked") == ids[:3] + [f4.id, f5.id]
        assert loom.path("main") == ids
        assert loom.ref("forked").origin == {"forked_from": {"ref": None, "node": ids[2]}}
        assert sorted(loom.leaves(ids[0])) == sorted([ids[4], f5.id])


class TestUseCase5EditAndSplice:
    def test_a_view_runs_through_the_edited_turn_3_and_the_original_turns_4_and_5(
        self, loom: Loom
    ) -> None:
        ids = thread(loom, ["T1", "T2", "T3", "T4", "T5"])
        t3b = loom.edit(ids[2], "T3 edited")
        loom.view("edited", ids[4])
        loom.select("edited", t3b.id)
        assert texts_of(loom, "edited") == ["T1", "T2", "T3 edited", "T4", "T5"]
        assert texts_of(loom, "main") == ["T1", "T2", "T3", "T4", "T5"]
        assert loom.versions(ids[2]) == [ids[2], t3b.id]
        assert loom.children(t3b.id) == [ids[3]]

    def test_editing_through_a_session_selects_the_new_version_there_only(self, loom: Loom) -> None:
        ids = thread(loom, ["T1", "T2", "T3", "T4", "T5"])
        loom.fork("main", "other")
        new = loom.edit("main~2", "T3*")
        assert loom.path("main") == [ids[0], ids[1], new.id, ids[3], ids[4]]
        assert loom.path("other") == ids

    def test_turns_added_through_a_splice_keep_it_forever(self, loom: Loom) -> None:
        ids = thread(loom, ["T1", "T2", "T3", "T4", "T5"])
        new = loom.edit("main~2", "T3*")
        t6 = loom.append("main", "T6", role="assistant")
        loom.select("main", ids[2])  # the session goes back to the original T3...
        assert texts_of(loom, t6.id) == ["T1", "T2", "T3*", "T4", "T5", "T6"]  # ...T6 does not
        assert loom.path("main")[2] == ids[2]
        assert new.id in loom.versions(ids[2])
        assert loom.verify().ok
