"""A path exported for a coding agent (`--format claude-code | codex | pi`), continued there,
and imported again: it comes back as the same path in another store, and as a branch of
the exported path in the store it left (matched by the ids of the exported lines).

The lines "the agent added" are written here in each agent's own shapes and ids (a
random uuid, an 8-hex pi id, a Codex item without id); the real agents reading the
exported files are in test_export_agents_live.py."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from test_export_claude_code import _coding_tree

import loomdb
from loomdb import Loom
from loomdb.errors import InvalidInput

FORMATS = ("claude-code", "codex", "pi")


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def shape(loom: Loom, at: str, fmt: str = "") -> list[tuple[str, str, list[str]]]:
    """Roles, kinds and block types of a path (what every agent format keeps); pi keeps
    one tool result a message, so there a tool node of two results is two nodes."""
    out = []
    for n in loom.nodes(loom.path(at)):
        parts = [[b] for b in n.content] if fmt == "pi" and n.role == "tool" else [n.content]
        out += [(n.role, n.kind, [b["type"] for b in p]) for p in parts]
    return out


def texts(loom: Loom, at: str) -> list[str]:
    return [b["text"] for n in loom.nodes(loom.path(at)) for b in n.content if b["type"] == "text"]


def continued(fmt: str, path: Path) -> None:
    """Append a user turn and an answer to an exported session as the agent would."""
    last = rows(path)[-1]
    now = "2030-01-01T00:00:0{}.000Z"
    if fmt == "claude-code":
        ask, reply = str(uuid.uuid4()), str(uuid.uuid4())
        common = {k: last[k] for k in ("sessionId", "cwd", "version", "gitBranch")}
        new = [{**common, "type": "user", "parentUuid": last["uuid"], "uuid": ask,
                "isSidechain": False, "userType": "external", "timestamp": now.format(1),
                "message": {"role": "user", "content": "and now?"}},
               {**common, "type": "assistant", "parentUuid": ask, "uuid": reply,
                "isSidechain": False, "userType": "external", "timestamp": now.format(2),
                "message": {"id": "msg_new", "type": "message", "role": "assistant",
                            "model": "m", "content": [{"type": "text", "text": "Done."}]}}]
    elif fmt == "codex":
        new = [{"timestamp": now.format(1), "type": "response_item", "payload": {
                    "type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": "and now?"}]}},
               {"timestamp": now.format(1), "type": "event_msg", "payload": {
                    "type": "user_message", "message": "and now?"}},
               {"timestamp": now.format(2), "type": "response_item", "payload": {
                    "type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": "Done."}]}}]
    else:
        new = [{"type": "message", "id": "a1b2c3d4", "parentId": last["id"],
                "timestamp": now.format(1), "message": {
                    "role": "user", "content": [{"type": "text", "text": "and now?"}]}},
               {"type": "message", "id": "e5f6a7b8", "parentId": "a1b2c3d4",
                "timestamp": now.format(2), "message": {
                    "role": "assistant", "content": [{"type": "text", "text": "Done."}],
                    "model": "m", "stopReason": "stop"}}]
    with path.open("a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(v) + "\n" for v in new)


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)  # the format, not the store
@pytest.mark.parametrize("fmt", FORMATS)
def test_the_path_comes_back_the_same_in_another_store(
    loom: Loom, tmp_path: Path, fmt: str
) -> None:
    _, _, other = _coding_tree(loom)
    out = tmp_path / "s.jsonl"
    loom.export_file(out, target=other.id, format=fmt)
    with loomdb.open(str(tmp_path / "elsewhere")) as elsewhere:
        report = elsewhere.import_file(out)
        assert report.errors == [] and len(report.trees) == 1
        session = elsewhere.refs("session", report.trees[0])[0].name
        assert shape(elsewhere, session) == shape(loom, other.id, fmt)
        assert texts(elsewhere, session) == texts(loom, other.id)


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_continued_session_is_a_branch_of_the_exported_path(
    loom: Loom, tmp_path: Path, fmt: str
) -> None:
    _, answer, _ = _coding_tree(loom)
    trees = [t.id for t in loom.trees()]
    out = tmp_path / "s.jsonl"
    loom.export_file(out, target=answer.id, format=fmt)
    untouched = loom.import_file(out)  # nothing new: the exported path is that path
    assert untouched.errors == [] and (untouched.nodes, untouched.trees) == (0, [])
    continued(fmt, out)
    report = loom.import_file(out)
    assert report.errors == [] and report.warnings == []
    assert report.nodes == 2 and [t.id for t in loom.trees()] == trees
    ask = next(n for n in loom.tree_nodes(answer.tree) if n.content == [
        {"type": "text", "text": "and now?"}])
    assert ask.parent == answer.id  # continues node N, in its tree
    session = next(r for r in loom.refs("session", answer.tree) if r.name.startswith("import/"))
    assert loom.nodes([session.node])[0].parent == ask.id
    assert loom.import_file(out).nodes == 0
    assert loom.verify().ok


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)  # the format, not the store
def test_claude_code_lines_name_the_folder_and_each_has_a_time(
    loom: Loom, tmp_path: Path
) -> None:
    _coding_tree(loom)
    out = tmp_path / "s.jsonl"
    loom.export_file(out, target="work", format="claude-code", cwd="/home/me/project")
    lines = rows(out)
    assert {r["cwd"] for r in lines} == {"/home/me/project"}
    times = [r["timestamp"] for r in lines]
    assert len(set(times)) == len(times) and times == sorted(times)


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)  # the format, not the store
def test_a_folder_is_only_for_agent_sessions(loom: Loom, tmp_path: Path) -> None:
    _coding_tree(loom)
    with pytest.raises(InvalidInput, match="--cwd"):
        loom.export_file(tmp_path / "x.md", target="work", format="markdown", cwd="/x")


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)  # the format, not the store
def test_a_watched_folder_lands_the_continued_session_as_a_branch_too(
    loom: Loom, tmp_path: Path
) -> None:
    _, answer, _ = _coding_tree(loom)
    project = tmp_path / "projects" / "-home-me-project"
    project.mkdir(parents=True)
    staged = tmp_path / "s.jsonl"
    loom.export_file(staged, target=answer.id, format="claude-code", cwd="/home/me/project")
    session = project / f"{rows(staged)[0]['sessionId']}.jsonl"
    staged.rename(session)
    watcher = loom.watcher(tmp_path / "projects")
    assert [d.report.nodes for d in watcher.step()] == [0]  # the exported path is stored
    continued("claude-code", session)
    [done] = watcher.step()
    assert done.report.errors == [] and done.report.nodes == 2
    assert len(loom.trees()) == 1
    ask = next(n for n in loom.tree_nodes(answer.tree)
               if n.content == [{"type": "text", "text": "and now?"}])
    assert ask.parent == answer.id
