"""`loomdb export HEADISH --format claude-code`: a path of any branch as a Claude Code
session file that imports back as the same path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from claude_code_lines import FIXTURES, lines_of

import loomdb
from loomdb.errors import InvalidInput

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8cfc0f01f0005000201a5f1e0a80000000049454e44ae426082")


def _path(loom, at) -> list[tuple[str, str, str]]:
    return [(n.role, n.kind, n.content_id) for n in loom.nodes(loom.path(at))]


def _coding_tree(loom):
    """A coding session with a branch: thinking, parallel calls, an image, a compaction."""
    _, root = loom.new_tree("fix the build", session="work")
    loom.append("work", [{"type": "thinking", "thinking": "look first", "signature": "s1"},
                         {"type": "text", "text": "Checking."},
                         {"type": "tool_use", "id": "c1", "name": "Bash", "input": {"cmd": "ls"}},
                         {"type": "tool_use", "id": "c2", "name": "Read", "input": {"p": "a"}}],
                role="assistant", author="claude-sonnet-4-5")
    loom.append("work", [{"type": "tool_result", "tool_use_id": "c1",
                          "content": [{"type": "text", "text": "a b"}]},
                         {"type": "tool_result", "tool_use_id": "c2", "is_error": True,
                          "content": [{"type": "text", "text": "no such file"}]}], role="tool")
    answer = loom.append("work", "The build is fixed.", role="assistant", author="claude")
    image = loom.put_blob(PNG, "image/png")
    loom.append("work", [{"type": "text", "text": "thanks, and this"},
                         {"type": "image", "ref": image, "mime_type": "image/png"}])
    loom.append("work", "Summary: the build was fixed.", role="user", kind="compaction")
    loom.append("work", "What next?")
    other = loom.append(answer.id, "Try another way instead")  # a branch off the answer
    return root, answer, other


def test_any_branch_round_trips_through_a_session_file(loom, tmp_path: Path) -> None:
    """Into another store, the path comes back as it was (in this one it is the same
    path already: see test_export_agents)."""
    _, _, other = _coding_tree(loom)
    elsewhere = loomdb.open(str(tmp_path / "elsewhere"))
    for at in ("work", other.id):
        out = tmp_path / f"{at[:4]}.jsonl"
        loom.export_file(out, target=at, format="claude-code")
        rows = lines_of(out)
        assert len({r["sessionId"] for r in rows}) == 1
        uuids = [r["uuid"] for r in rows]
        assert all(r["parentUuid"] in uuids[:i] or r["parentUuid"] is None
                   for i, r in enumerate(rows))
        report = elsewhere.import_file(out)
        assert report.errors == [] and len(report.trees) == 1
        tree = report.trees[0]
        session = elsewhere.refs("session", tree)[0]
        assert _path(elsewhere, session.name) == _path(loom, at)
    assert elsewhere.verify().ok
    elsewhere.close()


def test_the_line_shapes_are_claude_codes(loom, tmp_path: Path) -> None:
    _coding_tree(loom)
    out = tmp_path / "s.jsonl"
    loom.export_file(out, target="work", format="claude-code")
    rows = lines_of(out)
    replies = [r for r in rows if r["type"] == "assistant"]
    assert [len(r["message"]["content"]) for r in replies] == [1] * len(replies)
    first = [r for r in replies if r["message"]["id"] == replies[0]["message"]["id"]]
    assert [r["message"]["content"][0]["type"] for r in first] == [
        "thinking", "text", "tool_use", "tool_use"]
    results = [r for r in rows if r["type"] == "user" and isinstance(
        r["message"]["content"], list) and r["message"]["content"][0]["type"] == "tool_result"]
    by_uuid = {r["uuid"]: r for r in rows}
    for r in results:  # each result hangs off the line carrying its own call
        call = by_uuid[r["parentUuid"]]["message"]["content"][0]
        assert call["id"] == r["message"]["content"][0]["tool_use_id"]
    boundary = next(r for r in rows if r.get("subtype") == "compact_boundary")
    assert boundary["parentUuid"] is None and boundary["logicalParentUuid"] in by_uuid
    summary = rows[rows.index(boundary) + 1]
    assert summary["isCompactSummary"] and summary["parentUuid"] == boundary["uuid"]


def test_a_real_session_round_trips(loom, tmp_path: Path) -> None:
    folder = FIXTURES / "experiments-worktrees"
    loom.import_file(folder)
    tree = next(t for t in loom.trees() if "spawned" not in t.lineage)
    session = loom.refs("session", tree.id)[0].name
    out = tmp_path / "again.jsonl"
    loom.export_file(out, target=session, format="claude-code")
    with loomdb.open(str(tmp_path / "elsewhere")) as elsewhere:
        report = elsewhere.import_file(out)
        back = elsewhere.refs("session", report.trees[0])[0].name
        assert _path(elsewhere, back) == _path(loom, session)


def test_the_command_writes_the_file_and_refuses_all(tmp_path: Path) -> None:
    env = {**os.environ, "LOOMDB_HOME": str(tmp_path / "store")}
    run = [sys.executable, "-m", "loomdb"]
    subprocess.run([*run, "import", str(FIXTURES / "sample-project")], env=env, check=True,
                   capture_output=True)
    out = tmp_path / "resume.jsonl"
    done = subprocess.run([*run, "export", "import/claude-code/5c0375b4~3", "--format",
                           "claude-code", "--cwd", "/home/me/app", "-o", str(out), "--json"],
                          env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["trees"] == 1
    rows = lines_of(out)  # the main session's path without its last 3 nodes
    assert rows[0]["message"]["content"].startswith("<command-message>orchestrator")
    assert rows[-1]["type"] == "user" and {r["cwd"] for r in rows} == {"/home/me/app"}
    bad = subprocess.run([*run, "export", "--all", "--format", "claude-code"], env=env,
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "one path" in bad.stderr and bad.stdout == ""


def test_all_is_refused_in_the_library(loom) -> None:
    with pytest.raises(InvalidInput, match="one path"):
        loom.export_file("x.jsonl", format="claude-code")
