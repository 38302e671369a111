"""The git verbs of conversations through the front door, on both backends: diff two
paths, fork --fresh (the tail-fork), merge a branch back, replay user turns onto a new
base; and the same over the CLI (in process)."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import loomdb
from helpers import row_counts, texts_of, thread
from loomdb import InvalidInput, Loom, NotFound
from loomdb.branching.merge import CLIMB
from loomdb.cli import main
from loomdb.front import Door, Runtime
from loomdb.providers.config import parse_config
from loomdb.storage_ops import storage
from loopback_json import json_server
from pg import store_of
from test_bad_input import run_cli

#: a provider nobody answers at: asking it fails at once
DOWN = parse_config({"models": {"down": {"provider": "openai", "model": "m",
                                          "base_url": "http://127.0.0.1:9/v1",
                                          "api_key_env": "LOOMDB_TEST_KEY",
                                          "timeout": 2, "max_retries": 0}}})


Names = Callable[[str], str]
BACKENDS = [b for b in os.environ.get("LOOMDB_TEST_BACKENDS", "sqlite,postgres").split(",") if b]


@pytest.fixture(scope="module", params=BACKENDS)
def shared(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Loom]]:
    """One store per backend for the module (a PostgreSQL database costs seconds)."""
    folder = tmp_path_factory.mktemp(f"branches-{request.param}")
    with store_of(request.param, str(folder)) as url, loomdb.open(url) as lm:
        yield url, lm


@pytest.fixture
def store_url(shared: tuple[str, Loom]) -> str:
    return shared[0]


@pytest.fixture
def loom(shared: tuple[str, Loom]) -> Loom:
    return shared[1]


@pytest.fixture
def s() -> Names:
    """Ref names no other test of the module uses: `s("main")`."""
    tag = secrets.token_hex(4)
    return lambda name: f"{name}-{tag}"


def door(loom: Loom) -> Door:
    return loom.as_(loom.operator)


def refused_by_a_model_that_is_down(loom: Loom, call: Callable[[Any], Any]) -> None:
    """`call(branches)` asks the model `down` for a summary first, and fails there."""
    down = loom.as_(loom.operator, runtime=Runtime(config=DOWN))
    with pytest.raises(Exception, match="LOOMDB_TEST_KEY|connect|down"):
        call(down.branches)


def branched(loom: Loom, s: Names) -> list[str]:
    """main: q1 a1 q2 a2; alt forked at a1: q2b a2b."""
    ids = thread(loom, ["q1", "a1\nsame line", "q2", "a2"], session=s("main"))
    loom.fork(ids[1], s("alt"))
    ids.append(loom.append(s("alt"), "q2b").id)
    ids.append(loom.append(s("alt"), "a1\nother line", role="assistant").id)
    return ids


class TestDiff:
    def test_paths_align_from_their_common_ancestor(self, loom: Loom, s: Names) -> None:
        ids = branched(loom, s)
        found = door(loom).branches.diff(s("main"), s("alt"))
        assert found["ancestor"] == ids[1] and found["common"] == 2 and found["changed"] == 2
        first, second = found["entries"]
        assert (first["message"], first["status"]) == (3, "changed")
        assert (first["left"]["node"], first["right"]["node"]) == (ids[2], ids[4])
        assert first["text_diff"][-2:] == ["-q2", "+q2b"]
        assert "-a2" in second["text_diff"] and "+other line" in second["text_diff"]

    def test_a_path_with_itself_is_empty_and_a_longer_path_adds(self, loom: Loom, s: Names) -> None:
        ids = branched(loom, s)
        assert door(loom).branches.diff(s("main"), s("main"))["entries"] == []
        found = door(loom).branches.diff(ids[1], s("main"))
        assert [e["status"] for e in found["entries"]] == ["added", "added"]
        assert [e["status"] for e in door(loom).branches.diff(s("main"), ids[1])["entries"]] == [
            "removed", "removed"]

    def test_tool_calls_are_compared_by_name_and_input(self, loom: Loom, s: Names) -> None:
        _, root = loom.new_tree("weather?", session=s("a"))
        loom.fork(root.id, s("b"))
        for session, city in ((s("a"), "Oslo"), (s("b"), "Rome")):
            loom.append(session, [{"type": "tool_use", "id": "c1", "name": "weather",
                                   "input": {"city": city}}], role="assistant")
        entry = door(loom).branches.diff(s("a"), s("b"))["entries"][0]
        assert entry["status"] == "changed" and entry["tool_calls_differ"]
        assert entry["left"]["tool_calls"] == [{"name": "weather", "input": {"city": "Oslo"}}]

    def test_same_turns_in_two_trees_are_same_without_an_ancestor(self, loom: Loom, s: Names) -> None:
        thread(loom, ["hello", "hi"], session=s("one"))
        thread(loom, ["hello", "hey"], session=s("two"))
        found = door(loom).branches.diff(s("one"), s("two"))
        assert found["ancestor"] is None and found["common"] == 0
        assert [e["status"] for e in found["entries"]] == ["same", "changed"]

    def test_an_unknown_side_is_not_found(self, loom: Loom, s: Names) -> None:
        thread(loom, ["hello"], session=s("main"))
        with pytest.raises(NotFound):
            door(loom).branches.diff(s("main"), "ghost")


class TestFresh:
    def test_a_new_tree_from_a_message_with_nothing_before_it(self, loom: Loom, s: Names) -> None:
        tree, root = loom.new_tree("q1", session=s("main"), system="be brief")
        a1 = loom.append(s("main"), "a1", role="assistant")
        loom.append(s("main"), "q2")
        before = row_counts(loom)
        new, first = door(loom).branches.fork_fresh(a1.id, s("clean"))
        assert new.id != tree.id and new.root == first.id and new.system == "be brief"
        assert first.role == "assistant" and first.content == a1.content
        assert texts_of(loom, s("clean")) == ["be brief", "a1"]
        assert new.lineage == {"continued": {"tree": tree.id, "node": a1.id, "ref": None}}
        assert first.origin == {"continued_from": new.lineage["continued"]}
        assert row_counts(loom)["nodes"] == before["nodes"] + 1
        assert loom.path(s("main"))[-1] != first.id and loom.verify().ok
        loom.append(s("clean"), "go on")
        assert texts_of(loom, s("clean")) == ["be brief", "a1", "go on"]
        parent = next(t for t in door(loom).trees.lineage() if t["id"] == new.id)["parent"]
        assert parent["kind"] == "continued" and parent["message"] == 2

    def test_a_taken_name_or_a_failed_summary_writes_nothing(self, loom: Loom, s: Names) -> None:
        thread(loom, ["q1", "a1"], session=s("main"))
        before = row_counts(loom)
        with pytest.raises(InvalidInput):
            door(loom).branches.fork_fresh(s("main"), s("main"))
        refused_by_a_model_that_is_down(
            loom, lambda me: me.fork_fresh(s("main"), s("clean"), summary="down"))
        assert row_counts(loom) == before


class TestMerge:
    def test_a_merge_brings_the_tip_into_context_and_copies_nothing(self, loom: Loom, s: Names) -> None:
        ids = branched(loom, s)
        before = {n.id: n for n in loom.tree_nodes(loom.node(ids[0]).tree)}
        node, created = door(loom).branches.merge(s("alt"), s("main"))
        assert created and loom.ref(s("main")).node == node.id and node.parent == ids[3]
        assert node.sources == ((ids[5], "context"),)
        assert node.origin == {"merged_from": {"ref": s("alt"), "node": ids[5], "ancestor": ids[1],
                                               "messages": 2, "carries": "answer"}}
        texts = texts_of(loom, s("main"))
        assert texts[:4] == ["q1", "a1\nsame line", "q2", "a2"]
        assert texts[4] == "a1\nother line" and texts[5].startswith("[merged from alt")
        after = {n.id: n for n in loom.tree_nodes(loom.node(ids[0]).tree)}
        assert set(after) - set(before) == {node.id}
        assert all(after[k] == v for k, v in before.items()) and loom.verify().ok

    def test_merging_again_writes_nothing(self, loom: Loom, s: Names) -> None:
        branched(loom, s)
        node, _ = door(loom).branches.merge(s("alt"), s("main"), text="use the second")
        assert texts_of(loom, s("main"))[-1].endswith("\n\nuse the second")
        before = row_counts(loom)
        again, created = door(loom).branches.merge(s("alt"), s("main"))
        assert again.id == node.id and not created and row_counts(loom) == before

    def test_branches_parting_far_back_merge_alike(self, loom: Loom, s: Names) -> None:
        ids = thread(loom, ["q1", "a1"], session=s("main"))
        loom.fork(ids[1], s("alt"))
        with storage(loom).transaction():  # past how far a merge climbs from each end
            for i in range(3 * CLIMB):
                loom.append(s("main" if i % 3 else "alt"), f"m{i}")
        node, created = door(loom).branches.merge(s("alt"), s("main"))
        assert created and node.origin["merged_from"]["ancestor"] == ids[1]
        assert node.origin["merged_from"]["messages"] == CLIMB
        assert door(loom).branches.merge(s("alt"), s("main")) == (node, False)

    def test_what_cannot_merge_is_refused(self, loom: Loom, s: Names) -> None:
        ids = branched(loom, s)
        thread(loom, ["other"], session=s("elsewhere"))
        before = row_counts(loom)
        with pytest.raises(InvalidInput, match="already on the path"):
            door(loom).branches.merge(ids[1], s("main"))
        with pytest.raises(InvalidInput, match="different trees"):
            door(loom).branches.merge(s("elsewhere"), s("main"))
        refused_by_a_model_that_is_down(
            loom, lambda me: me.merge(s("alt"), s("main"), summary="down"))
        assert row_counts(loom) == before


class TestReplay:
    def test_user_turns_are_replayed_in_order_onto_an_edit(self, loom: Loom, s: Names) -> None:
        ids = thread(loom, ["q1", "a1", "q2", "a2", "q3", "a3"], session=s("main"))
        edited = loom.edit(ids[2], "q2 again")
        done = door(loom).branches.replay(s("main"), s("again"), onto=edited.id, generate=False)
        assert done.ancestor == edited.id and done.stopped is None
        assert [t["from"] for t in done.turns] == [ids[4]]
        assert texts_of(loom, s("again")) == ["q1", "a1", "q2 again", "q3"]
        assert loom.node(s("again")).origin == {"replayed_from": ids[4]}
        assert loom.ref(s("again")).forked_from == {"ref": None, "node": edited.id}

    def test_the_whole_conversation_from_its_first_turn(self, loom: Loom, s: Names) -> None:
        ids = thread(loom, ["q1", "a1", "q2", "a2"], session=s("main"))
        done = door(loom).branches.replay(s("main"), s("rerun"), generate=False)
        assert done.onto == ids[0] and [t["from"] for t in done.turns] == [ids[2]]
        found = door(loom).branches.diff(s("main"), s("rerun"))
        # unanswered, q2 stands where a1 was
        assert [e["status"] for e in found["entries"]] == ["changed", "removed", "removed"]

    def test_a_tool_turn_stops_the_replay_and_says_why(self, loom: Loom, s: Names) -> None:
        _, root = loom.new_tree("weather?", session=s("main"))
        loom.append(s("main"), [{"type": "tool_use", "id": "c1", "name": "weather",
                              "input": {}}], role="assistant")
        loom.append(s("main"), [{"type": "tool_result", "tool_use_id": "c1",
                              "content": [{"type": "text", "text": "sun"}]}], role="tool")
        done = door(loom).branches.replay(s("main"), s("again"), onto=root.id, generate=False)
        assert done.turns == [] and "tool results" in (done.stopped or "")

    def test_a_path_of_another_tree_is_replayed_whole(self, loom: Loom, s: Names) -> None:
        source = thread(loom, ["q1", "a1", "q2"], session=s("main"))
        _, root = loom.new_tree("elsewhere", session=s("other"))
        done = door(loom).branches.replay(s("main"), s("again"), onto=root.id, generate=False)
        assert done.ancestor is None and [t["from"] for t in done.turns] == [source[0], source[2]]
        assert texts_of(loom, s("again")) == ["elsewhere", "q1", "q2"]

    def test_a_failing_model_stops_and_keeps_what_was_written(self, loom: Loom, s: Names) -> None:
        thread(loom, ["q1", "a1", "q2"], session=s("main"))
        down = loom.as_(loom.operator, runtime=Runtime(config=DOWN))
        done = down.branches.replay(s("main"), s("again"), models=["down"])
        assert done.stopped and done.stopped.startswith("the model failed")
        assert loom.ref(s("again")).node == done.onto and done.turns == []


def _model(path: str, headers: Any, asked: Any) -> tuple[int, Any]:
    """An OpenAI-compatible model answering `re: <the last message>`."""
    last = asked["messages"][-1]["content"]
    text = last if isinstance(last, str) else "".join(p.get("text", "") for p in last)
    return 200, {"id": "c1", "object": "chat.completion", "created": 0, "model": "m",
                 "choices": [{"index": 0, "finish_reason": "stop", "message": {
                     "role": "assistant", "content": f"re: {text}"}}],
                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


@pytest.fixture(scope="module")
def model() -> Iterator[Runtime]:
    """A runtime whose model `stub` is `_model`, served on loopback for the module."""
    with json_server(_model) as port:
        config = parse_config({"models": {"stub": {
            "provider": "openai", "model": "m", "api_key_env": "LOOMDB_TEST_KEY",
            "max_retries": 0, "base_url": f"http://127.0.0.1:{port}/v1", "timeout": 5}}})
        yield Runtime(config=config).with_environ({"LOOMDB_TEST_KEY": "k"})


class TestWithAModel:
    def test_each_replayed_turn_is_answered_before_the_next(
            self, loom: Loom, s: Names, model: Runtime) -> None:
        ids = thread(loom, ["Say hi.", "hi", "Say bye.", "bye"], session=s("main"))
        me = loom.as_(loom.operator, runtime=model)
        done = me.branches.replay(s("main"), s("again"), models=["stub"])
        assert done.stopped is None and [t["from"] for t in done.turns] == [ids[2]]
        path = loom.nodes(loom.path(s("again")))
        assert [n.role for n in path] == ["user", "assistant", "user", "assistant"]
        assert [n.content[0]["text"] for n in path] == [
            "Say hi.", "re: Say hi.", "Say bye.", "re: Say bye."]
        assert path[3].provenance and path[3].provenance["alias"] == "stub"
        assert done.turns[0]["answers"] == [path[3].id] and loom.verify().ok
        found = me.branches.diff(s("main"), s("again"))
        assert [e["status"] for e in found["entries"]] == ["changed", "same", "changed"]

    def test_with_tools_offered_the_tool_loop_answers_and_old_results_are_left(
            self, loom: Loom, s: Names, model: Runtime) -> None:
        _, root = loom.new_tree("weather?", session=s("main"),
                                options={"tools": ["spawn_subagent"]})
        loom.append(s("main"), [{"type": "tool_use", "id": "c1", "name": "weather",
                                 "input": {}}], role="assistant")
        loom.append(s("main"), [{"type": "tool_result", "tool_use_id": "c1",
                                 "content": [{"type": "text", "text": "sun"}]}], role="tool")
        q = loom.append(s("main"), "and tomorrow?")
        me = loom.as_(loom.operator, runtime=model)
        done = me.branches.replay(s("main"), s("again"), models=["stub"])
        assert done.stopped is None and [t["from"] for t in done.turns] == [q.id]
        assert texts_of(loom, s("again")) == [
            "weather?", "re: weather?", "and tomorrow?", "re: and tomorrow?"]

    def test_a_summary_is_the_models_with_its_provenance(
            self, loom: Loom, s: Names, model: Runtime) -> None:
        branched(loom, s)
        me = loom.as_(loom.operator, runtime=model)
        node, _ = me.branches.merge(s("alt"), s("main"), summary="stub")
        assert node.origin["merged_from"]["carries"] == "summary"
        assert node.provenance and node.provenance["alias"] == "stub"
        assert "Summary of that branch:\nre: Summarize" in node.content[0]["text"]
        tree, root = me.branches.fork_fresh(s("alt"), s("clean"), summary="stub")
        assert root.role == "user" and root.content[0]["text"].startswith("re: Summarize")
        assert root.origin["summary"]["alias"] == "stub" and loom.verify().ok


class TestCli:
    def test_the_verbs_over_the_cli(self, store_url: str, loom: Loom, s: Names) -> None:
        ids = branched(loom, s)

        def run(*args: str) -> dict:
            code, out, err = run_cli(store_url, *args, "--json")
            assert code == 0, err
            return json.loads(out)

        assert [e["status"] for e in run("diff", s("main"), s("alt"))["entries"]] == ["changed"] * 2
        code, out, _ = run_cli(store_url, "diff", s("main"), s("alt"))
        assert code == 0 and out.startswith(f"common ancestor: {ids[1]}") and "~ 3\tuser" in out
        merged = run("merge", s("alt"), s("main"), "--text", "done")
        assert merged["created"] and merged["merged_from"]["carries"] == "text"
        code, out, _ = run_cli(store_url, "log", s("main"))
        assert f"(merged from {s('alt')} at {ids[5]})" in " ".join(out.split())
        replayed = run("replay", s("alt"), "--onto", ids[1], "--session", s("again"), "--no-generate")
        assert [t["from"] for t in replayed["turns"]] == [ids[4]]
        fresh = run("fork", s("alt"), s("clean"), "--fresh")
        assert fresh["continued"]["node"] == ids[5] and fresh["name"] == s("clean")
        code, out, _ = run_cli(store_url, "trees")
        assert f"continued from {loom.node(ids[5]).tree} at {ids[5]}" in out
        for args in (["fork", s("alt"), "x", "--summary", "m"],
                     ["merge", s("alt"), s("main"), "--text", "a", "--summary", "m"],
                     ["replay", s("alt")], ["diff", s("main")]):
            with pytest.raises(SystemExit) as done:
                main(["--db", store_url, *args])
            assert done.value.code == 2
