"""pi sessions: the real v1 sample (tests/fixtures/agent-sessions/pi) and sessions in both
layouts built from pi's documented session format, imported into a real store of each
backend. Expected counts come from a separate pass over the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from store_counts import Counts, store_counts

from loomdb import Loom
from loomdb.interop import detect
from loomdb.interop.stream import Input

SAMPLE = (Path(__file__).resolve().parents[1] / "fixtures" / "agent-sessions" / "pi"
          / "pi_badlogic-pi-mono_coding-agent_test_fixtures_large-session.jsonl")
_NODES = ("message", "compaction", "branch_summary", "custom_message")


def expected(entries: list[dict[str, Any]], branches: int = 0) -> Counts:
    messages = [e for e in entries if e.get("type") in _NODES]
    blocks = [b for e in messages for b in (e.get("message") or {}).get("content") or []
              if isinstance(b, dict)]
    return Counts(
        sessions=1, nodes=len(messages), branches=branches, child_trees=0,
        compactions=sum(e["type"] == "compaction" for e in messages),
        tool_calls=sum(b.get("type") == "toolCall" for b in blocks),
        tool_results=sum((e.get("message") or {}).get("role") == "toolResult" for e in messages),
    )


def header(sid: str = "pi-session-1", **extra: Any) -> dict[str, Any]:
    return {"type": "session", "id": sid, "timestamp": "2025-12-03T14:00:00.000Z",
            "cwd": "/work", **extra}


def msg(eid: str | None, parent: str | None, role: str, text: str, second: int,
        **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "message", "timestamp": f"2025-12-03T14:00:{second:02d}.000Z",
                             "message": {"role": role, "content": [{"type": "text", "text": text}],
                                         **extra}}
    if eid is not None:
        entry.update(id=eid, parentId=parent)
    return entry


def write(tmp_path: Path, values: list[dict[str, Any]], name: str = "s.jsonl",
          *, joined: bool = False) -> Path:
    path = tmp_path / name
    sep = "" if joined else "\n"
    path.write_text(sep.join(json.dumps(v) for v in values) + "\n", encoding="utf-8")
    return path


def tree_of(loom: Loom) -> str:
    trees = loom.trees()
    assert len(trees) == 1
    return trees[0].id


def texts(loom: Loom, at: str) -> list[str]:
    return [m["content"][0].get("text", "") for m in loom.context(at)["messages"]]


class TestRealSample:
    def entries(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]

    def test_every_message_lands_with_the_counts_the_file_holds(self, loom: Loom) -> None:
        report = loom.import_file(SAMPLE)
        assert report.errors == [] and report.warnings == []
        want = expected(self.entries())
        assert (want.nodes, want.tool_calls) == (914, 391)  # as SOURCES.md says
        assert store_counts(loom) == want
        assert loom.verify().ok

    def test_importing_again_adds_nothing(self, loom: Loom) -> None:
        first = loom.import_file(SAMPLE)
        again = loom.import_file(SAMPLE)
        assert (again.nodes, again.trees, again.skipped) == (0, [], first.nodes)

    def test_model_and_thinking_changes_are_options_of_the_next_message(self, loom: Loom) -> None:
        loom.import_file(SAMPLE)
        changes = [e for e in self.entries()
                   if e["type"] in ("model_change", "thinking_level_change")]
        nodes = loom.tree_nodes(tree_of(loom))
        with_options = [n for n in nodes if n.options]
        assert 0 < len(with_options) <= len(changes)
        assert all(set(n.options) == {"pi"} for n in with_options)
        first = min(with_options, key=lambda n: n.depth)
        assert first.options == {"pi": {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}}

    def test_tool_results_sit_under_the_call_they_answer(self, loom: Loom) -> None:
        loom.import_file(SAMPLE)
        nodes = {n.id: n for n in loom.tree_nodes(tree_of(loom))}
        results = [(n, b) for n in nodes.values() for b in n.content if b["type"] == "tool_result"]
        assert results
        for node, block in results:
            calls: set[str] = set()
            cursor = nodes.get(node.parent or "")
            while cursor is not None and cursor.role == "tool":
                cursor = nodes.get(cursor.parent or "")
            assert cursor is not None
            calls = {b["id"] for b in cursor.content if b["type"] == "tool_use"}
            assert block["tool_use_id"] in calls


class TestTreeLayout:
    def session(self) -> list[dict[str, Any]]:
        return [
            header(version=3),
            msg("u1", None, "user", "start", 1),
            msg("a1", "u1", "assistant", "one", 2, model="claude-sonnet-4-5"),
            {"type": "model_change", "id": "mc", "parentId": "a1", "provider": "openai",
             "modelId": "gpt-5", "timestamp": "2025-12-03T14:00:03.000Z"},
            msg("u2", "mc", "user", "second", 4),
            msg("a2", "u2", "assistant", "two", 5),
            {"type": "compaction", "id": "c1", "parentId": "a2", "summary": "Talked about one.",
             "firstKeptEntryId": "u2", "tokensBefore": 5000,
             "timestamp": "2025-12-03T14:00:06.000Z"},
            msg("u3", "c1", "user", "third", 7),
            # the user went back to a1 with /tree and left a summary of the branch
            {"type": "branch_summary", "id": "b1", "parentId": "a1", "fromId": "u3",
             "summary": "Explored two and three.", "timestamp": "2025-12-03T14:00:08.000Z"},
            msg("u4", "b1", "user", "another way", 9),
            {"type": "label", "id": "l1", "parentId": "u4", "targetId": "a1", "label": "checkpoint",
             "timestamp": "2025-12-03T14:00:10.000Z"},
            {"type": "session_info", "id": "si", "parentId": "l1", "name": "Refactor",
             "timestamp": "2025-12-03T14:00:11.000Z"},
            {"type": "custom", "id": "cu", "parentId": "si", "customType": "ext",
             "data": {"n": 1}, "timestamp": "2025-12-03T14:00:12.000Z"},
        ]

    def test_branches_compaction_label_and_title(self, loom: Loom, tmp_path: Path) -> None:
        entries = self.session()
        report = loom.import_file(write(tmp_path, entries))
        assert report.errors == [] and report.warnings == []
        assert store_counts(loom) == expected(entries, branches=1)
        tree = loom.tree(tree_of(loom))
        assert tree.title == "Refactor"
        assert tree.lineage["imported"]["metadata"]["left_out"] == {"custom": 1}
        # the active branch is where the file ends: through the branch summary
        assert texts(loom, "import/pi/pi-session-1") == [
            "start", "one", "Explored two and three.", "another way"]
        checkpoint = loom.node("import/pi/pi-session-1/checkpoint")
        assert checkpoint.content == [{"type": "text", "text": "one"}]
        assert loom.verify().ok

    def test_the_compaction_keeps_what_it_names_and_replaces_the_rest(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        loom.import_file(write(tmp_path, self.session()))
        nodes = loom.tree_nodes(tree_of(loom))
        third = next(n for n in nodes if n.content[0].get("text") == "third")
        compaction = next(n for n in nodes if n.kind == "compaction")
        assert third.parent == compaction.id
        kept = {n.id: n.content[0]["text"] for n in nodes if n.id in {s for s, _ in
                                                                       compaction.sources}}
        assert sorted(kept.values()) == ["second", "two"]
        assert texts(loom, third.id) == ["Talked about one.", "second", "two", "third"]

    def test_a_model_change_becomes_the_options_of_the_next_message(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        loom.import_file(write(tmp_path, self.session()))
        nodes = loom.tree_nodes(tree_of(loom))
        second = next(n for n in nodes if n.content[0].get("text") == "second")
        assert second.options == {"pi": {"provider": "openai", "modelId": "gpt-5"}}
        assert loom.node(second.parent or "").content[0]["text"] == "one"

    def test_a_session_that_grew_adds_only_its_new_entries(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        entries = self.session()
        path = write(tmp_path, entries)
        loom.import_file(path)
        write(tmp_path, entries + [msg("a4", "cu", "assistant", "fine", 13)])
        grown = loom.import_file(path)
        assert (grown.nodes, grown.warnings, grown.errors) == (1, [], [])
        assert texts(loom, "import/pi/pi-session-1")[-1] == "fine"

    def test_a_dangling_parent_is_refused_naming_it(self, loom: Loom, tmp_path: Path) -> None:
        entries = [header(version=3), msg("u1", None, "user", "a", 1),
                   msg("a1", "nope", "assistant", "b", 2)]
        report = loom.import_file(write(tmp_path, entries))
        assert report.trees == [] and len(report.errors) == 1
        assert "parentId" in report.errors[0]["reason"] and "'nope'" in report.errors[0]["reason"]
        assert loom.trees() == []


class TestVersionOne:
    def test_file_order_index_compaction_and_two_values_on_a_line(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        entries = [
            header(branchedFrom="/home/someone/.pi/agent/sessions/old.jsonl"),
            msg(None, None, "user", "q1", 1),
            msg(None, None, "assistant", "r1", 2),
            msg(None, None, "user", "q2", 3),
            msg(None, None, "assistant", "r2", 4),
            {"type": "compaction", "summary": "Earlier: q1.", "firstKeptEntryIndex": 3,
             "tokensBefore": 900, "timestamp": "2025-12-03T14:00:05.000Z"},
            msg(None, None, "user", "q3", 6),
        ]
        path = write(tmp_path, entries, joined=True)  # every value on one line
        assert detect(Input(path)) == "pi"
        report = loom.import_file(path)
        assert report.errors == []
        assert store_counts(loom) == expected(entries)
        assert texts(loom, "import/pi/pi-session-1") == ["Earlier: q1.", "q2", "r2", "q3"]
        meta = loom.tree(tree_of(loom)).lineage["imported"]["metadata"]
        assert meta["branchedFrom"] == "/home/someone/.pi/agent/sessions/old.jsonl"

    def test_an_image_keeps_its_bytes(self, loom: Loom, tmp_path: Path) -> None:
        png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
        entry = msg(None, None, "user", "look", 1)
        entry["message"]["content"].append({"type": "image", "data": png, "mimeType": "image/png"})
        report = loom.import_file(write(tmp_path, [header(), entry]))
        assert report.blobs == 1
        root = loom.node(loom.tree(tree_of(loom)).root)
        image = root.content[1]
        assert image["type"] == "image" and loom.blob(image["ref"])[:4] == b"\x89PNG"
