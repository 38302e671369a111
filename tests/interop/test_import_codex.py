"""Codex CLI rollouts: the real sample (tests/fixtures/agent-sessions/codex) and rollouts
built from the format's documented structure, imported into a real store of each backend.

Expected counts come from a separate pass over the file's values, not from the importer.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from store_counts import Counts, store_counts

from loomdb import Loom
from loomdb.agents.subagents import children
from loomdb.errors import InvalidInput
from loomdb.interop import detect
from loomdb.interop.stream import Input

SAMPLE = (Path(__file__).resolve().parents[1] / "fixtures" / "agent-sessions" / "codex"
          / "codex_AcidicSoil-codex-session-view_sample_session_rollout-2025-11-17T15-30-28"
          "-019a93b9.jsonl")
_ASSISTANT_SIDE = {"reasoning", "function_call", "custom_tool_call", "local_shell_call",
                   "web_search_call"}


@pytest.fixture(autouse=True, params=["whole", "in-parts"])
def parts(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every import here twice: each rollout held whole, and given in parts of one
    message or so (as a session too long to hold is): the store must come out the same."""
    if request.param == "in-parts":
        from loomdb.interop import importer

        monkeypatch.setattr(importer, "PART_CHARS", 1)
    return str(request.param)


def expected(lines: list[dict[str, Any]]) -> Counts:
    """What the rollout holds: a node per user/system message, per run of the
    assistant's items, per run of tool outputs; compactions; function calls."""
    nodes, last, calls, outputs, compactions = 0, "", 0, 0, 0
    for line in lines:
        item = line.get("payload") if "payload" in line else line
        if line.get("type") == "compacted":
            nodes, last, compactions = nodes + 1, "", compactions + 1
            continue
        if line.get("type", "response_item") != "response_item" and "payload" in line:
            continue
        kind = item.get("type")
        side = ("assistant" if kind in _ASSISTANT_SIDE
                or (kind == "message" and item.get("role") == "assistant")
                else "tool" if kind in ("function_call_output", "custom_tool_call_output")
                else "other" if kind == "message" else None)
        if kind == "reasoning" and not item.get("summary"):
            continue
        calls += kind in ("function_call", "custom_tool_call")
        outputs += kind in ("function_call_output", "custom_tool_call_output")
        if side is None:
            continue
        if side == "other" or side != last:
            nodes += 1
        last = side
    return Counts(sessions=1, nodes=nodes, branches=0, child_trees=0, compactions=compactions,
                  tool_calls=calls, tool_results=outputs)


def sample_lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]


def envelope(kind: str, payload: dict[str, Any], second: int) -> dict[str, Any]:
    return {"timestamp": f"2025-11-17T21:30:{second:02d}.000Z", "type": kind, "payload": payload}


def rollout(tmp_path: Path, values: list[dict[str, Any]], name: str = "rollout-x.jsonl",
            *, pretty: bool = False) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join((json.dumps(v, indent=2) if pretty else json.dumps(v)) + "\n" for v in values)
    path.write_text(text, encoding="utf-8")
    return path


def session(sid: str = "019a-test", **extra: Any) -> dict[str, Any]:
    return envelope("session_meta", {"id": sid, "timestamp": "2025-11-17T21:30:00.000Z",
                                     "cwd": "/work", "cli_version": "0.58.0", **extra}, 0)


def user(text: str, second: int) -> dict[str, Any]:
    return envelope("response_item", {"type": "message", "role": "user",
                                      "content": [{"type": "input_text", "text": text}]}, second)


def call(cid: str, second: int) -> dict[str, Any]:
    return envelope("response_item", {"type": "function_call", "name": "shell", "call_id": cid,
                                      "arguments": json.dumps({"command": ["ls"]})}, second)


def output(cid: str, second: int) -> dict[str, Any]:
    return envelope("response_item", {"type": "function_call_output", "call_id": cid,
                                      "output": "a.txt"}, second)


def answer(text: str, second: int) -> dict[str, Any]:
    return envelope("response_item", {"type": "message", "role": "assistant",
                                      "content": [{"type": "output_text", "text": text}]}, second)


def context(model: str, second: int) -> dict[str, Any]:
    return envelope("turn_context", {"cwd": "/work", "model": model, "effort": "high",
                                     "approval_policy": "never"}, second)


def only_tree(loom: Loom) -> str:
    trees = loom.trees()
    assert len(trees) == 1
    return trees[0].id


class TestRealSample:
    def test_every_message_lands_with_the_counts_the_file_holds(self, loom: Loom) -> None:
        report = loom.import_file(SAMPLE)
        assert report.errors == [] and report.warnings == []
        want = expected(sample_lines())
        assert want.tool_calls == 39 and want.tool_results == 39  # as SOURCES.md says
        assert store_counts(loom) == want
        assert report.nodes == want.nodes == 80
        assert loom.verify().ok

    def test_importing_again_adds_nothing(self, loom: Loom) -> None:
        first = loom.import_file(SAMPLE)
        again = loom.import_file(SAMPLE)
        assert (again.nodes, again.trees, again.skipped) == (0, [], first.nodes)

    def test_ui_events_are_not_imported_twice(self, loom: Loom) -> None:
        loom.import_file(SAMPLE)
        texts = [b.get("text", "") for n in loom.tree_nodes(only_tree(loom)) for b in n.content]
        prompt = next(line["payload"]["message"] for line in sample_lines()
                      if line["payload"].get("type") == "user_message")
        assert texts.count(prompt) == 1

    def test_turn_context_sets_the_options_once(self, loom: Loom) -> None:
        loom.import_file(SAMPLE)
        with_options = [n for n in loom.tree_nodes(only_tree(loom)) if n.options]
        assert len(with_options) == 1  # 40 turn_context lines, all the same
        assert with_options[0].options == {"codex": {
            "cwd": "/home/user/projects/temp/chatbot-ui", "approval_policy": "never",
            "sandbox_policy": {"mode": "danger-full-access"}, "model": "gpt-5.1-codex",
            "effort": "high", "summary": "auto"}}
        assert with_options[0].role == "assistant" and with_options[0].author == "gpt-5.1-codex"

    def test_a_tool_result_answers_the_call_before_it(self, loom: Loom) -> None:
        loom.import_file(SAMPLE)
        nodes = {n.id: n for n in loom.tree_nodes(only_tree(loom))}
        for node in nodes.values():
            for block in node.content:
                if block["type"] == "tool_result":
                    parent = nodes[node.parent] if node.parent else None
                    assert parent is not None and parent.role == "assistant"
                    ids = [b["id"] for b in parent.content if b["type"] == "tool_use"]
                    assert block["tool_use_id"] in ids


class TestStructure:
    def test_the_session_grows_and_a_reimport_adds_only_the_new_messages(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        values = [session(), user("hi", 1), context("gpt-5", 2), call("c1", 3), output("c1", 4),
                  answer("done", 5)]
        path = rollout(tmp_path, values)
        assert loom.import_file(path).nodes == 4
        rollout(tmp_path, values + [user("more", 6), answer("ok", 7)])
        grown = loom.import_file(path)
        assert (grown.nodes, grown.skipped, grown.warnings) == (2, 4, [])
        tree = only_tree(loom)
        assert len(loom.tree_nodes(tree)) == 6 and loom.branch_points(tree) == []
        head = loom.resolve("import/codex/019a-test")
        assert loom.node(head).content == [{"type": "text", "text": "ok"}]

    def test_the_title_is_the_first_sentence_a_person_wrote(self, loom: Loom,
                                                              tmp_path: Path) -> None:
        values = [session(), user("# AGENTS.md instructions for /work\n\n<INSTRUCTIONS>\nBe "
                                  "terse.\n</INSTRUCTIONS>", 1),
                  user("<environment_context>\n  <cwd>/work</cwd>\n</environment_context>", 2),
                  user("<system-reminder>Plan mode.</system-reminder>\nFix the failing parser "
                       "test please. It breaks on empty lines.", 3), answer("done", 4)]
        loom.import_file(rollout(tmp_path, values))
        assert loom.tree(only_tree(loom)).title == "Fix the failing parser test please."
        again = rollout(tmp_path, [session("019b-test"), user("<environment_context>", 1),
                                   answer("ok", 2)], "rollout-y.jsonl")
        loom.import_file(again)  # no words of a person anywhere: the root's words, as before
        assert {t.title for t in loom.trees()} >= {"<environment_context>"}

    def test_pretty_printed_values_and_the_older_layout_without_envelopes(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        values = [
            {"id": "old-1", "timestamp": "2025-04-01T10:00:00Z", "instructions": "Be careful."},
            {"record_type": "state"},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]},
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}]},
            {"type": "function_call", "name": "shell", "call_id": "c", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c", "output": "y"},
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "z"}]},
        ]
        path = rollout(tmp_path, values, pretty=True)
        assert detect(Input(path)) == "codex"
        report = loom.import_file(path)
        assert report.errors == [] and report.nodes == 4
        tree = loom.tree(only_tree(loom))
        assert tree.system == "Be careful."
        kinds = [[b["type"] for b in n.content] for n in loom.tree_nodes(tree.id)]
        assert sorted(map(tuple, kinds)) == sorted([("text",), ("thinking", "tool_use"),
                                                    ("tool_result",), ("text",)])

    def test_a_compacted_item_is_a_compaction_node_on_the_same_path(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        values = [session(), user("first", 1), answer("one", 2),
                  envelope("compacted", {"message": "We talked about one."}, 3),
                  user("next", 4), answer("two", 5)]
        loom.import_file(rollout(tmp_path, values))
        tree = only_tree(loom)
        nodes = loom.tree_nodes(tree)
        compaction = [n for n in nodes if n.kind == "compaction"]
        assert len(compaction) == 1
        assert store_counts(loom) == expected(values)
        assert loom.tree(tree).root == min(nodes, key=lambda n: n.depth).id
        context = loom.context("import/codex/019a-test")
        texts = [m["content"][0]["text"] for m in context["messages"]]
        assert texts[0].endswith("We talked about one.") and texts[-2:] == ["next", "two"]
        assert "first" not in texts

    def test_developer_messages_are_system_nodes_keeping_their_role(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        dev = envelope("response_item", {"type": "message", "role": "developer",
                                         "content": [{"type": "input_text", "text": "rules"}]}, 1)
        loom.import_file(rollout(tmp_path, [session(), dev, user("q", 2)]))
        root = loom.node(loom.tree(only_tree(loom)).root)
        assert root.role == "system"
        assert root.provenance["metadata"] == {"source_role": "developer"}

    def test_a_folder_reads_every_rollout_below_it_and_follows_no_link(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        outside = rollout(tmp_path / "elsewhere", [session("secret"), user("private", 1)],
                          "rollout-secret.jsonl")
        root = tmp_path / "sessions"
        rollout(root / "2025" / "11" / "17", [session("a"), user("a", 1)], "rollout-a.jsonl")
        rollout(root / "2025" / "11" / "18", [session("b"), user("b", 1)], "rollout-b.jsonl")
        os.symlink(outside, root / "2025" / "11" / "18" / "rollout-link.jsonl")
        os.symlink(outside.parent, root / "2025" / "linked-dir")
        report = loom.import_file(root)
        assert report.errors == [] and len(report.trees) == 2
        texts = {b.get("text") for t in loom.trees() for n in loom.tree_nodes(t.id)
                 for b in n.content}
        assert texts == {"a", "b"}

    def test_a_broken_value_fails_its_session_only_and_writes_nothing_of_it(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        root = tmp_path / "sessions"
        rollout(root, [session("good"), user("fine", 1)], "rollout-1.jsonl")
        bad = rollout(root, [session("bad"), user("x", 1)], "rollout-2.jsonl")
        bad.write_text(bad.read_text() + '{"type": "response_item", "payload": {oops\n')
        deep = rollout(root, [session("deep")], "rollout-3.jsonl")
        deep.write_text(deep.read_text() + "[" * 5000 + "]" * 5000 + "\n")
        huge = rollout(root, [session("huge")], "rollout-4.jsonl")
        huge.write_text(huge.read_text() + '{"type": "x", "payload": ' + "1" * 5000 + "}\n")
        report = loom.import_file(root)
        assert len(report.trees) == 1 and len(report.errors) == 3
        reasons = " ".join(e["where"] + " " + e["reason"] for e in report.errors)
        assert "rollout-4.jsonl line 2" in reasons and "digits" in reasons
        assert "rollout-2.jsonl line 3" in reasons and "not JSON" in reasons
        assert "nested deeper than" in reasons
        assert {b["text"] for n in loom.tree_nodes(only_tree(loom)) for b in n.content} == {"fine"}

    def test_an_unknown_role_is_refused_with_its_place(self, loom: Loom, tmp_path: Path) -> None:
        odd = envelope("response_item", {"type": "message", "role": "wizard", "content": []}, 1)
        report = loom.import_file(rollout(tmp_path, [session(), odd]))
        assert report.trees == [] and len(report.errors) == 1
        assert "line 2.role" in report.errors[0]["reason"]
        assert "unknown role 'wizard'" in report.errors[0]["reason"]
        assert loom.trees() == []


def test_a_folder_with_no_session_is_refused_in_one_line(loom: Loom, tmp_path: Path) -> None:
    (tmp_path / "notes.jsonl").write_text('{"hello": 1}\n')
    with pytest.raises(InvalidInput, match="holding no session files it can read"):
        loom.import_file(tmp_path)


class TestChildThreads:
    def spawn_call(self, cid: str, task: str, second: int) -> dict[str, Any]:
        return envelope("response_item", {"type": "function_call", "name": "spawn_agent",
                                          "call_id": cid,
                                          "arguments": json.dumps({"message": task})}, second)

    def tool_output(self, cid: str, text: str, second: int) -> dict[str, Any]:
        return envelope("response_item", {"type": "function_call_output", "call_id": cid,
                                          "output": text}, second)

    def write(self, root: Path) -> None:
        parent = [session("parent-thread"), user("split the work", 1),
                  self.spawn_call("s1", "count the files", 2),
                  self.tool_output("s1", json.dumps({"agent_id": "child-thread"}), 3),
                  envelope("response_item", {"type": "function_call", "name": "wait",
                                             "call_id": "w1",
                                             "arguments": json.dumps({"ids": ["child-thread"]})},
                           4),
                  self.tool_output("w1", json.dumps({"status": {"child-thread": {
                      "completed": "There are 3 files."}}}), 5),
                  answer("The helper found 3 files.", 6)]
        child = [session("child-thread", source={"subagent": {"thread_spawn": {
                     "parent_thread_id": "parent-thread", "depth": 1}}}),
                 user("count the files", 2), call("c1", 3), output("c1", 4),
                 answer("There are 3 files.", 5)]
        # the child's file sorts first: the parent must still be read before it
        rollout(root / "2025", child, "rollout-a-child.jsonl")
        rollout(root / "2025", parent, "rollout-b-parent.jsonl")

    def test_a_child_thread_is_a_child_tree_spawned_from_its_call(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        self.write(tmp_path)
        report = loom.import_file(tmp_path)
        assert report.errors == [] and report.warnings == [] and len(report.trees) == 2
        counts = store_counts(loom)
        assert (counts.sessions, counts.child_trees, counts.tool_calls) == (1, 1, 3)
        child = next(t for t in loom.trees() if "spawned" in t.lineage)
        parent = next(t for t in loom.trees() if "spawned" not in t.lineage)
        spawned = child.lineage["spawned"]
        assert spawned["tree"] == parent.id and spawned["session"] == "import/codex/parent-thread"
        call_node = loom.node(spawned["node"])
        assert [b["name"] for b in call_node.content if b["type"] == "tool_use"] == ["spawn_agent"]
        summary = loom.node(spawned["summary"])
        assert summary.role == "tool" and "There are 3 files." in summary.content[0]["content"][
            0]["text"]
        assert spawned["source"] == {"conversation": "parent-thread", "message": "2",
                                     "task": "count the files", "summary": "5"}
        (listed,) = children(loom, spawned["node"])  # the agents area lists it, as for spawn
        assert (listed.tree, listed.task, listed.summary_node) == (
            child.id, "count the files", spawned["summary"])
        assert loom.import_file(tmp_path).nodes == 0

    def test_a_child_imported_without_its_parent_says_so(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        self.write(tmp_path)
        report = loom.import_file(tmp_path / "2025" / "rollout-a-child.jsonl")
        assert report.errors == [] and len(report.trees) == 1
        assert "parent (parent-thread) was not imported with it" in report.warnings[0]["reason"]
        (tree,) = loom.trees()
        assert tree.lineage["spawned"] == {"source": {"conversation": "parent-thread"}}


def test_a_value_over_the_session_line_limit_is_refused_in_place(
    store_url: str, tmp_path: Path
) -> None:
    import loomdb
    from loomdb.limits import Limits

    big = envelope("response_item", {"type": "function_call_output", "call_id": "c1",
                                     "output": "x" * 5000}, 4)
    root = tmp_path / "sessions"
    rollout(root, [session("big"), user("hi", 1), call("c1", 2), big], "rollout-1.jsonl")
    rollout(root, [session("small"), user("fine", 1)], "rollout-2.jsonl")
    with loomdb.open(store_url, limits=Limits(session_line=4000)) as loom:
        report = loom.import_file(root)
        assert len(report.trees) == 1 and len(report.errors) == 1
        assert report.errors[0]["where"] == "rollout-1.jsonl"
        assert "line 4: a value longer than 4000 bytes" in report.errors[0]["reason"]
        assert [t.title for t in loom.trees()] == ["fine"]



# ---------------------------------------------------------------- every layout, every user message


def legacy(lines: list[dict[str, Any]], *, instructions: bool) -> list[dict[str, Any]]:
    """The real sample rewritten in the layout Codex wrote before the envelopes (2025):
    the session meta bare on the first line (`{"id", "timestamp"}`, with `instructions`
    in the oldest files and `git` in the later ones), the response items bare after it,
    a `{"record_type": "state"}` mark after each turn; no event or turn_context lines.
    The shape is codex-rs's pre-envelope rollout recorder's (`SessionMeta`, then
    `ResponseItem`s and `SessionStateSnapshot` marks)."""
    meta = lines[0]["payload"]
    head: dict[str, Any] = {"id": meta["id"], "timestamp": meta["timestamp"]}
    if instructions:
        head["instructions"] = None
    else:
        head["git"] = meta.get("git") or {}
    out = [head]
    for line in lines[1:]:
        if line.get("type") != "response_item":
            continue
        item = line["payload"]
        out.append(item)
        if item.get("type") == "message" and item.get("role") == "assistant":
            out.append({"record_type": "state"})
    return out


def users_in(values: list[dict[str, Any]]) -> int:
    """User messages as the raw file holds them (enveloped or bare)."""
    items = [v.get("payload") if "payload" in v else v for v in values]
    return sum(1 for i in items if isinstance(i, dict) and i.get("type") == "message"
               and i.get("role") == "user")


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)  # the format, not the store
@pytest.mark.parametrize("layout", ["envelope", "bare-with-git", "bare-with-instructions"])
def test_every_user_message_of_every_layout_is_kept(
    loom: Loom, tmp_path: Path, layout: str
) -> None:
    values = sample_lines()
    if layout != "envelope":
        values = legacy(values, instructions=layout == "bare-with-instructions")
    path = rollout(tmp_path, values, "rollout-2025-09-13T04-30-17-legacy.jsonl")
    assert detect(Input(path)) == "codex"
    report = loom.import_file(path)
    assert report.errors == [] and report.warnings == []
    users = [n for n in loom.tree_nodes(only_tree(loom)) if n.role == "user"]
    assert len(users) == users_in(values) > 0


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)  # the format, not the store
def test_an_item_of_a_kind_not_read_is_a_warning_not_a_silent_gap(
    loom: Loom, tmp_path: Path
) -> None:
    values = [session(), user("x", 1),
              envelope("response_item", {"type": "image_generation_call", "id": "ig"}, 2),
              answer("y", 3)]
    report = loom.import_file(rollout(tmp_path, values))
    assert report.errors == [] and report.nodes == 2
    assert ["'image_generation_call' item" in w["reason"] for w in report.warnings] == [True]
