"""Claude Code sessions in: real session files (three Claude Code versions, three subagent
layouts) with their counts checked against the lines, and session files written here in
the shapes the real ones lack (compactions, rewinds, progress lines, 2.0.x agent files)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from claude_code_lines import FIXTURES, SessionWriter, call, count, forks, text

from loomdb.agents.subagents import children
from loomdb.errors import InvalidInput

SAMPLE = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
LOG = "fe869ecb-c176-478f-9734-7e4b8ef12cff"
WORKTREES = "ef958aa1-0e93-49f0-bb71-150f63befcd1"


def _trees(loom):
    return {t.lineage["imported"]["conversation"]: t for t in loom.trees()}


def _tool_calls(nodes) -> int:
    return sum(1 for n in nodes for b in n.content if b["type"] == "tool_use")


def _roles(nodes) -> dict[str, int]:
    out: dict[str, int] = {}
    for n in nodes:
        out[n.role] = out.get(n.role, 0) + 1
    return out


class TestRealSessions:
    def test_inline_sidechains_of_1_0_are_child_trees_of_their_task_calls(self, loom) -> None:
        folder = FIXTURES / "sample-project"
        report = loom.import_file(folder)
        assert report.errors == [] and report.warnings == []
        main = count(folder / f"{SAMPLE}.jsonl", sidechain=False)
        side = count(folder / f"{SAMPLE}.jsonl", sidechain=True)
        assert (main["roots"], side["roots"]) == (1, 2)
        trees = _trees(loom)
        assert len(trees) == 1 + side["roots"]
        parent = trees[SAMPLE]
        nodes = loom.tree_nodes(parent.id)
        assert len(nodes) == main["nodes"] == 21
        assert _roles(nodes) == {"user": main["users"], "assistant": main["replies"],
                                 "tool": main["tools"]}
        assert _tool_calls(nodes) == main["calls"]
        assert len(loom.branch_points(parent.id)) == forks(folder / f"{SAMPLE}.jsonl") == 0
        kids = [t for sid, t in trees.items() if sid != SAMPLE]
        assert sum(len(loom.tree_nodes(t.id)) for t in kids) == side["nodes"] == 20
        assert sum(_tool_calls(loom.tree_nodes(t.id)) for t in kids) == side["calls"]
        for kid in kids:
            spawned = kid.lineage["spawned"]
            assert spawned["tree"] == parent.id
            call_node = loom.node(spawned["node"])
            assert call_node.tree == parent.id and call_node.role == "assistant"
            task = next(b for b in call_node.content if b["type"] == "tool_use"
                        and b["id"] == spawned["source"]["call"])
            assert loom.tree_nodes(kid.id)[0].content[0]["text"] == task["input"]["prompt"]
            summary = loom.node(spawned["summary"])
            assert summary.role == "tool" and any(
                b.get("tool_use_id") == task["id"] for b in summary.content)
            listed = children(loom, spawned["node"])
            assert [c.tree for c in listed] == [kid.id]
            assert listed[0].summary_node == spawned["summary"]
        assert loom.import_file(folder).nodes == 0
        assert loom.verify().ok

    def test_a_2_1_session_with_its_subagents_folder(self, loom) -> None:
        folder = FIXTURES / "experiments-worktrees"
        report = loom.import_file(folder)
        assert report.errors == []
        main = count(folder / f"{WORKTREES}.jsonl")
        sub_file = folder / WORKTREES / "subagents" / "agent-a4ca7529859c158c2.jsonl"
        sub = count(sub_file, sidechain=True)
        trees = _trees(loom)
        parent = trees[WORKTREES]
        nodes = loom.tree_nodes(parent.id)
        assert len(nodes) == main["nodes"] == 37
        assert _tool_calls(nodes) == main["calls"] == 40
        # parallel calls make no branch
        assert len(loom.branch_points(parent.id)) == forks(folder / f"{WORKTREES}.jsonl") == 0
        kid = trees[f"{WORKTREES}/agent-a4ca7529859c158c2"]
        assert len(loom.tree_nodes(kid.id)) == sub["nodes"] == 40
        assert _tool_calls(loom.tree_nodes(kid.id)) == sub["calls"]
        spawned = kid.lineage["spawned"]
        assert spawned["tree"] == parent.id
        result = loom.node(spawned["summary"])
        assert any(b.get("tool_use_id") == spawned["source"]["call"] for b in result.content)
        # thinking blocks are kept, and one reply's lines are one node
        kinds = {b["type"] for n in nodes for b in n.content}
        assert {"thinking", "tool_use", "tool_result", "text"} <= kinds
        # lines that are no message are counted, not imported
        meta = parent.lineage["imported"]["metadata"]["lines_not_messages"]
        assert meta["attachment"] == 49 and meta["permission-mode"] == 8
        assert loom.import_file(folder).nodes == 0
        assert loom.verify().ok

    def test_summary_lines_for_leaves_elsewhere_are_a_warning(self, loom) -> None:
        path = FIXTURES / "claude-code-log-sample" / f"{LOG}.jsonl"
        report = loom.import_file(path)
        assert report.errors == []
        assert any("15 summary line(s)" in w["reason"] for w in report.warnings)
        tree = _trees(loom)[LOG]
        nodes = loom.tree_nodes(tree.id)
        c = count(path)
        assert len(nodes) == c["nodes"] == 71 and _tool_calls(nodes) == c["calls"]
        assert len(loom.branch_points(tree.id)) == forks(path) == 0
        assert len(tree.lineage["imported"]["metadata"]["summaries"]) == 15
        first = nodes[0]
        meta = first.provenance["metadata"]
        assert meta["cwd"] and meta["version"] == "1.0.24" and meta["uuids"] == [
            first.origin["message"]]
        assert loom.import_file(path).nodes == 0


def _session(tmp_path: Path) -> tuple[Path, SessionWriter]:
    folder = tmp_path / "-work-project"
    return folder, SessionWriter(folder / "s1.jsonl", "s1")


class TestShapes:
    def test_one_reply_written_as_lines_with_parallel_calls_is_one_node(self, loom, tmp_path) -> None:
        folder, w = _session(tmp_path)
        u = w.user(None, "list files twice")
        a1 = w.reply(u, "msg_1", {"type": "thinking", "thinking": "hm", "signature": "sig"})
        a2 = w.reply(a1, "msg_1", call("c1"))
        a3 = w.reply(a2, "msg_1", call("c2"))
        r2 = w.result(a3, "c2", "b.txt")
        w.other(r2, "progress", data={"message": {"type": "assistant"}})
        r1 = w.result(a2, "c1", "a.txt")
        att = w.other(r1, "attachment", attachment={"type": "hook"})
        w.reply(att, "msg_2", text("done"))
        loom.import_file(folder)
        tree = _trees(loom)["s1"]
        nodes = loom.tree_nodes(tree.id)
        assert [n.role for n in nodes] == ["user", "assistant", "tool", "assistant"]
        assert [b["type"] for b in nodes[1].content] == ["thinking", "tool_use", "tool_use"]
        assert [b["tool_use_id"] for b in nodes[2].content] == ["c2", "c1"]
        assert loom.branch_points(tree.id) == []
        assert nodes[1].provenance["metadata"]["uuids"] == [a1, a2, a3]

    def test_a_rewind_is_a_real_branch_and_the_newest_line_is_the_session(
        self, loom, tmp_path
    ) -> None:
        folder, w = _session(tmp_path)
        u = w.user(None, "first question")
        a = w.reply(u, "m1", text("answer"))
        w.user(a, "follow up")
        w.user(a, "asked again instead")  # a rewind to after the answer
        loom.import_file(folder)
        tree = _trees(loom)["s1"]
        assert len(loom.branch_points(tree.id)) == forks(folder / "s1.jsonl") == 1
        session = loom.refs("session", tree.id)[0]
        assert loom.node(session.node).content[0]["text"] == "asked again instead"

    def test_a_compaction_is_a_node_on_the_same_path_with_its_summariser_as_child(
        self, loom, tmp_path
    ) -> None:
        folder, w = _session(tmp_path)
        u = w.user(None, "long work")
        a = w.reply(u, "m1", text("did a lot"))
        b = w.other(None, "system", subtype="compact_boundary", content="Conversation compacted",
                    logicalParentUuid=a, compactMetadata={"trigger": "auto", "preTokens": 155000})
        s = w.user(b, "This session is being continued. Summary: a lot was done.",
                   isCompactSummary=True)
        w.reply(s, "m2", text("continuing"))
        agent = SessionWriter(folder / "agent-acompact-1a2b.jsonl", "s1")
        q = agent.user(None, "Summarise the conversation", isSidechain=True)
        agent.reply(q, "m9", text("a lot was done"), isSidechain=True)
        report = loom.import_file(folder)
        assert report.errors == []
        trees = _trees(loom)
        nodes = loom.tree_nodes(trees["s1"].id)
        assert [n.kind for n in nodes] == ["message", "message", "compaction", "message"]
        comp = nodes[2]
        assert comp.parent == nodes[1].id  # not a second root
        assert "Summary: a lot was done" in comp.content[0]["text"]
        assert comp.provenance["metadata"]["compact"]["preTokens"] == 155000
        ctx = loom.context(nodes[3].id)
        assert [m["role"] for m in ctx["messages"]] == ["user", "assistant"]  # summary + reply
        kid = trees["s1/agent-acompact-1a2b"]
        assert kid.lineage["spawned"]["node"] == comp.id
        assert loom.verify().ok

    def test_2_0_agent_files_beside_the_session_link_through_agent_id(
        self, loom, tmp_path
    ) -> None:
        folder, w = _session(tmp_path)
        u = w.user(None, "research this")
        a = w.reply(u, "m1", call("t1", "Task", prompt="look it up", description="research"))
        w.result(a, "t1", "found it", toolUseResult={"agentId": "abc123", "content": []})
        sub = SessionWriter(folder / "agent-abc123.jsonl", "s1")
        q = sub.user(None, "look it up", isSidechain=True, agentId="abc123")
        sub.reply(q, "m5", text("found it"), isSidechain=True)
        other = SessionWriter(folder / "agent-zzz.jsonl", "s0")  # another session's agent
        other.user(None, "unrelated", isSidechain=True)
        loom.import_file(folder)
        trees = _trees(loom)
        assert set(trees) == {"s1", "s1/agent-abc123"}
        kid = trees["s1/agent-abc123"]
        assert [c.tree for c in children(loom, kid.lineage["spawned"]["node"])] == [kid.id]

    def test_an_unlinked_subagent_file_is_a_tree_of_its_own_with_a_warning(
        self, loom, tmp_path
    ) -> None:
        folder, w = _session(tmp_path)
        w.user(None, "hello")
        sub = SessionWriter(folder / "s1" / "subagents" / "agent-lost.jsonl", "s1")
        sub.user(None, "orphan task", isSidechain=True)
        report = loom.import_file(folder)
        assert set(_trees(loom)) == {"s1", "s1/agent-lost"}
        assert any("no Task call" in w["reason"] for w in report.warnings)
        assert "spawned" not in _trees(loom)["s1/agent-lost"].lineage

    def test_a_subagent_file_given_alone_is_the_tree_the_folder_import_finds(
        self, loom, tmp_path
    ) -> None:
        folder = FIXTURES / "experiments-worktrees"
        alone = loom.import_file(folder / WORKTREES / "subagents" / "agent-a4ca7529859c158c2.jsonl")
        assert alone.nodes == 40
        report = loom.import_file(folder)
        assert report.errors == [] and (report.nodes, report.skipped) == (37, 40)
        assert set(_trees(loom)) == {WORKTREES, f"{WORKTREES}/agent-a4ca7529859c158c2"}

    def test_summary_line_titles_the_tree_and_bookmarks_its_leaf(self, loom, tmp_path) -> None:
        folder, w = _session(tmp_path)
        u = w.user(None, "hello")
        a = w.reply(u, "m1", text("hi"))
        w.write({"type": "summary", "summary": "Greeting exchange", "leafUuid": a})
        loom.import_file(folder)
        tree = _trees(loom)["s1"]
        assert tree.title == "Greeting exchange"
        marks = [r for r in loom.refs("bookmark") if r.tree == tree.id]
        assert [loom.node(r.node).role for r in marks] == ["assistant"]

    def test_a_summary_in_a_later_session_titles_the_earlier_one(self, loom, tmp_path) -> None:
        folder = tmp_path / "p"
        first = SessionWriter(folder / "s1.jsonl", "s1")
        leaf = first.reply(first.user(None, "hello"), "m1", text("hi"))
        later = SessionWriter(folder / "s2.jsonl", "s2")
        later.write({"type": "summary", "summary": "First chat", "leafUuid": leaf})
        later.user(None, "new day")
        report = loom.import_file(folder)
        assert report.warnings == []
        trees = _trees(loom)
        assert trees["s1"].title == "First chat" and trees["s2"].title != "First chat"

    def test_a_grown_session_adds_only_its_new_lines(self, loom, tmp_path) -> None:
        folder, w = _session(tmp_path)
        u = w.user(None, "one")
        a = w.reply(u, "m1", text("two"))
        assert loom.import_file(folder).nodes == 2
        w.user(a, "three")
        again = loom.import_file(folder)
        assert (again.nodes, again.skipped) == (1, 2)
        session = loom.refs("session", _trees(loom)["s1"].id)[0]
        assert loom.node(session.node).content[0]["text"] == "three"

    def test_a_projects_folder_imports_every_project(self, loom, tmp_path) -> None:
        projects = tmp_path / "projects"
        shutil.copytree(FIXTURES / "sample-project", projects / "-path-to-Demo")
        SessionWriter(projects / "-work-other" / "s9.jsonl", "s9").user(None, "hi")
        report = loom.import_file(projects)
        assert report.errors == [] and len(report.trees) == 4
        assert {SAMPLE, "s9"} <= set(_trees(loom))

    def test_lines_hanging_from_another_file_are_a_tree_of_their_own(
        self, loom, tmp_path
    ) -> None:
        folder, w = _session(tmp_path)
        u = w.user(None, "hello")
        w.reply(u, "m1", text("hi"))
        note = w.other("elsewhere-uuid", "attachment")
        w.user(note, "continued from another session")
        report = loom.import_file(folder)
        trees = _trees(loom)
        assert set(trees) == {"s1", f"s1/part-{w.lines[3]['uuid']}"}
        assert any("elsewhere-uuid" in x["reason"] for x in report.warnings)
        assert len(loom.tree_nodes(trees["s1"].id)) == 2

    def test_the_same_uuid_in_two_sessions_is_two_nodes(self, loom, tmp_path) -> None:
        folder = tmp_path / "p"
        for sid in ("s1", "s2"):
            SessionWriter(folder / f"{sid}.jsonl", sid).user(None, "same", uuid="shared-uuid")
        assert loom.import_file(folder).nodes == 2


class TestUntrusted:
    def test_a_line_nested_too_deep_is_refused_with_its_line_number(self, loom, tmp_path) -> None:
        folder, w = _session(tmp_path)
        w.user(None, "fine")
        deep: object = "x"
        for _ in range(200):
            deep = [deep]
        w.user("s1-u1", "deep", extra=deep)
        report = loom.import_file(folder / "s1.jsonl")
        assert report.errors and "line 2" in report.errors[0]["where"] + report.errors[0]["reason"]
        assert "nested deeper" in report.errors[0]["reason"]
        assert loom.trees() == []

    def test_a_line_over_the_session_line_limit_is_refused(self, store_url, tmp_path) -> None:
        import loomdb
        from loomdb.limits import Limits

        folder, w = _session(tmp_path)
        w.user(None, "short")
        w.user("s1-u1", "x" * 5000)
        with loomdb.open(store_url, limits=Limits(session_line=4096)) as small:
            report = small.import_file(folder)
            assert len(report.errors) == 1
            assert "line 2" in report.errors[0]["reason"]
            assert "LOOMDB_LIMIT_SESSION_LINE" in report.errors[0]["reason"]
            assert small.trees() == []

    def test_links_in_the_folder_are_not_followed(self, loom, tmp_path) -> None:
        outside = tmp_path / "outside"
        SessionWriter(outside / "secret.jsonl", "secret").user(None, "not yours")
        folder, w = _session(tmp_path)
        w.user(None, "mine")
        os.symlink(outside / "secret.jsonl", folder / "secret.jsonl")
        os.symlink(outside, folder / "s1")  # a session's subagents folder as a link
        loom.import_file(folder)
        assert set(_trees(loom)) == {"s1"}

    def test_paths_named_in_lines_are_never_read(self, loom, tmp_path) -> None:
        folder, w = _session(tmp_path)
        u = w.user(None, "go")
        a = w.reply(u, "m1", call("t1", "Task", prompt="x"))
        w.result(a, "t1", "ok", toolUseResult={"agentId": "../../outside/secret"})
        shutil.copytree(FIXTURES / "sample-project", tmp_path / "outside")
        loom.import_file(folder)
        assert set(_trees(loom)) == {"s1"}

    def test_a_half_written_last_line_waits(self, loom, tmp_path) -> None:
        folder, w = _session(tmp_path)
        u = w.user(None, "one")
        w.write({"type": "user", "uuid": "half", "parentUuid": u}, newline=False)
        with open(folder / "s1.jsonl", "rb+") as fh:  # cut the last line short
            fh.seek(-5, 2)
            fh.truncate()
        report = loom.import_file(folder)
        assert (report.nodes, report.errors) == (1, [])

    def test_a_copy_under_another_name_reads_nothing_beside_it(self, loom, tmp_path) -> None:
        upload = tmp_path / "uploads"
        upload.mkdir()
        shutil.copy(FIXTURES / "experiments-worktrees" / f"{WORKTREES}.jsonl",
                    upload / "loomdb-import-x1y2.jsonl")
        shutil.copytree(FIXTURES / "experiments-worktrees" / WORKTREES,
                        upload / "loomdb-import-x1y2")
        shutil.copy(upload / "loomdb-import-x1y2" / "subagents" / "agent-a4ca7529859c158c2.jsonl",
                    upload / "agent-a4ca7529859c158c2.jsonl")
        report = loom.import_file(upload / "loomdb-import-x1y2.jsonl")
        assert report.errors == []
        assert set(_trees(loom)) == {WORKTREES}  # the session its lines name; no subagent

    def test_a_folder_without_sessions_is_refused(self, loom, tmp_path) -> None:
        (tmp_path / "empty").mkdir()
        with pytest.raises(InvalidInput, match="directory"):
            loom.import_file(tmp_path / "empty")

    def test_a_bad_block_fails_its_session_only(self, loom, tmp_path) -> None:
        folder = tmp_path / "p"
        SessionWriter(folder / "good.jsonl", "good").user(None, "fine")
        bad = SessionWriter(folder / "bad.jsonl", "bad")
        bad.write({"type": "user", "uuid": "b1", "parentUuid": None, "sessionId": "bad",
                   "message": {"role": "user", "content": [{"type": "text", "text": 5}]}})
        report = loom.import_file(folder)
        assert len(report.errors) == 1 and "bad" in report.errors[0]["where"]
        assert set(_trees(loom)) == {"good"}
        assert json.dumps(report.to_json())
