"""A session Claude Code forked (`claude --resume ID --fork-session`) imports as a branch
of the tree its original session imported as: the forked file holds the original's
lines again (same uuids and times, a new `sessionId`, each copied reply naming the
session it was asked in as `requestSessionId`), and those lines are the nodes already
stored, so only what the fork added is written, below the fork point.

The files are the ones the real Claude Code 2.1.332 wrote through the gateway
(`tests/fixtures/agent-sessions/written/SOURCES.md`), with its own short system prompt
and no tools: `small` asked a question, then (`--resume`) a second; `small-forked` is
`--resume <small> --fork-session` after the first answer."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from loomdb import Loom
from loomdb.interop.importer import import_file
from loomdb.interop.watch import Watcher

WRITTEN = Path(__file__).parents[1] / "fixtures" / "agent-sessions" / "written"
ORIGINAL = WRITTEN / "claude-code-2.1.332-small.jsonl"
FORKED = WRITTEN / "claude-code-2.1.332-small-forked.jsonl"
#: the same, with Claude Code's default system prompt and tools, after two answers
PAIRS = [(ORIGINAL, FORKED), (WRITTEN / "claude-code-2.1.332-resumed.jsonl",
                               WRITTEN / "claude-code-2.1.332-forked.jsonl")]


def _sid(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        sid = json.loads(line).get("sessionId")
        if sid:
            return str(sid)
    raise AssertionError(f"no sessionId in {path}")


def _project(tmp: Path, *files: Path) -> Path:
    """The files as Claude Code lays them out: `<project>/<sessionId>.jsonl`."""
    folder = tmp / "projects" / "-work"
    folder.mkdir(parents=True, exist_ok=True)
    for file in files:
        shutil.copyfile(file, folder / f"{_sid(file)}.jsonl")
    return folder


def _text(loom: Loom, node: str) -> str:
    return "".join(b.get("text", "") for b in loom.node(node).content if b["type"] == "text")


def _leaf_with(loom: Loom, tree: str, text: str) -> str:
    found = [leaf for leaf in loom.leaves(tree) if _text(loom, leaf) == text]
    assert len(found) == 1, (text, [_text(loom, leaf) for leaf in loom.leaves(tree)])
    return found[0]


def _said(path: Path) -> list[tuple[str, str, str]]:
    """(uuid, role, text) of the file's user questions and assistant texts, in order."""
    out = []
    for line in map(json.loads, path.read_text(encoding="utf-8").splitlines()):
        content = (line.get("message") or {}).get("content") if line.get("type") in (
            "user", "assistant") else None
        text = content if isinstance(content, str) else "".join(
            b.get("text", "") for b in content or [] if isinstance(b, dict))
        if text:
            out.append((line["uuid"], line["type"], text))
    return out


def _assert_one_tree_with_the_fork_as_a_branch(
        loom: Loom, original: Path = ORIGINAL, forked: Path = FORKED) -> None:
    said, fork_said = _said(original), _said(forked)
    copied = {u for u, _, _ in said}
    own = [text for u, _, text in fork_said if u not in copied]  # the fork's question, answer
    point = [text for u, _, text in fork_said if u in copied][-1]
    trees = loom.trees()
    assert len(trees) == 1, [t.title for t in trees]
    tree = trees[0].id
    last = loom.path(_leaf_with(loom, tree, said[-1][2]))  # the original's last answer
    fork = loom.path(_leaf_with(loom, tree, own[-1]))  # the fork's own answer
    shared = [a for a, b in zip(last, fork, strict=False) if a == b]
    # the fork point is the answer the fork was made after; the fork added its question
    # and its answer
    assert _text(loom, shared[-1]) == point
    assert [_text(loom, n) for n in fork[len(shared):]] == own
    # nothing copied: the tree holds the original's nodes and the fork's two
    assert len(loom.tree_nodes(tree)) == len(set(last) | set(fork)) == len(last) + 2
    # each session file's own session points at its own leaf
    heads = {r.origin["imported"]["conversation"]: r.node for r in loom.refs(kind="session")}
    assert heads == {_sid(forked): fork[-1], _sid(original): last[-1]}


@pytest.mark.parametrize(("original", "forked"), PAIRS, ids=["small", "default-prompt"])
def test_each_pair_claude_code_wrote_imports_as_one_tree(
        loom: Loom, tmp_path: Path, original: Path, forked: Path) -> None:
    folder = _project(tmp_path, original, forked)
    loom.import_file(folder / f"{_sid(original)}.jsonl")
    assert loom.import_file(folder / f"{_sid(forked)}.jsonl").nodes == 2
    _assert_one_tree_with_the_fork_as_a_branch(loom, original, forked)


def test_the_forked_file_imported_after_the_original_is_a_branch_of_its_tree(
        loom: Loom, tmp_path: Path) -> None:
    folder = _project(tmp_path, ORIGINAL, FORKED)
    first = loom.import_file(folder / f"{_sid(ORIGINAL)}.jsonl")
    report = loom.import_file(folder / f"{_sid(FORKED)}.jsonl")  # told from its lines
    assert report.format == "claude_code" and not report.errors, report.errors
    assert report.nodes == 2 and report.grown == 1 and len(first.trees) == 1
    _assert_one_tree_with_the_fork_as_a_branch(loom)
    again = loom.import_file(folder / f"{_sid(FORKED)}.jsonl")
    assert again.nodes == 0  # idempotent, as every import


def test_a_project_folder_holding_both_writes_the_original_first(
        loom: Loom, tmp_path: Path) -> None:
    folder = _project(tmp_path, ORIGINAL)
    # the fork's file listed first (a copy under another name): the folder's order is
    # not the order they are written in
    shutil.copyfile(FORKED, folder / "0-fork.jsonl")
    report = loom.import_file(folder)
    assert not report.errors, report.errors
    _assert_one_tree_with_the_fork_as_a_branch(loom)


def test_watch_records_the_fork_as_a_branch(loom: Loom, tmp_path: Path) -> None:
    home = tmp_path / "claude"
    _project(home, ORIGINAL)
    watcher = Watcher(loom, home / "projects")
    assert [i.error for i in watcher.step()] == [None]
    _project(home, FORKED)  # Claude Code writes the fork later
    done = watcher.step()
    assert [(i.error, i.report.nodes if i.report else None) for i in done] == [(None, 2)]
    _assert_one_tree_with_the_fork_as_a_branch(loom)


def test_a_first_watch_over_a_folder_holding_both_writes_the_original_first(
        loom: Loom, tmp_path: Path) -> None:
    home = tmp_path / "claude"
    _project(home, ORIGINAL, FORKED)
    assert _sid(FORKED) < _sid(ORIGINAL)  # the fork's file is listed first
    done = Watcher(loom, home / "projects").step()
    assert [i.error for i in done] == [None, None]
    assert [i.path.stem for i in done] == [_sid(ORIGINAL), _sid(FORKED)]
    _assert_one_tree_with_the_fork_as_a_branch(loom)


def test_a_fork_of_a_tree_the_caller_does_not_see_is_a_tree_of_its_own(
        loom: Loom, tmp_path: Path) -> None:
    folder = _project(tmp_path, ORIGINAL, FORKED)
    loom.import_file(folder / f"{_sid(ORIGINAL)}.jsonl")
    original = loom.trees()[0]
    report = import_file(loom, folder / f"{_sid(FORKED)}.jsonl",
                         sees=lambda tree: tree != original.id)
    assert not report.errors and report.trees != [original.id]
    assert len(loom.trees()) == 2
    assert len(loom.tree_nodes(original.id)) == len(loom.path(
        _leaf_with(loom, original.id, _said(ORIGINAL)[-1][2])))  # not grown


def test_copied_lines_that_do_not_hang_as_stored_are_not_matched(
        loom: Loom, tmp_path: Path) -> None:
    """A line naming the original session is matched only by exact id, same role and
    same parent: a fork file whose copied root was re-parented lands as its own tree."""
    folder = _project(tmp_path, ORIGINAL)
    loom.import_file(folder / f"{_sid(ORIGINAL)}.jsonl")
    lines = [json.loads(x) for x in FORKED.read_text(encoding="utf-8").splitlines()]
    root = next(x for x in lines if x.get("type") == "user")
    extra = {**root, "uuid": "00000000-0000-4000-8000-000000000001",
             "message": {"role": "user", "content": "an opening of its own"}}
    root["parentUuid"] = extra["uuid"]
    at = lines.index(root)
    lines.insert(at, extra)
    changed = folder / f"{_sid(FORKED)}.jsonl"
    changed.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    report = loom.import_file(changed)
    assert not report.errors, report.errors
    assert len(loom.trees()) == 2


@pytest.mark.parametrize("name", [ORIGINAL.name, FORKED.name])
def test_the_fixtures_are_what_claude_code_wrote(name: str) -> None:
    """The forked file copies the original's lines with their uuids, under its own
    session id, its copied replies naming the original as `requestSessionId`."""
    lines = [json.loads(x) for x in (WRITTEN / name).read_text(encoding="utf-8").splitlines()]
    assert {x["version"] for x in lines if "version" in x} == {"2.1.332"}
    if name == FORKED.name:
        original = {x["uuid"] for x in map(json.loads, ORIGINAL.read_text(
            encoding="utf-8").splitlines()) if x.get("uuid")}
        copied = [x for x in lines if x.get("uuid") in original]
        assert copied and {x["sessionId"] for x in copied} == {_sid(FORKED)}
        assert {x.get("requestSessionId") for x in copied if x["type"] == "assistant"} == {
            _sid(ORIGINAL)}
