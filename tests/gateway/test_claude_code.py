"""The real Claude Code CLI (the `claude` binary the claude-agent-sdk wheel bundles)
pointed at `loomdb gateway` with `ANTHROPIC_BASE_URL`: what it sends is recorded as
the Anthropic wire promises, whether the local model answers (fitted into its window)
or loomdb forwards to Anthropic's API (here its loopback stand-in) as a recording proxy.
On the main this was written against, every call answered 404 `{"detail":"Not Found"}`
and Claude Code gave up at once."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents_live import Gateway, keep_fixture, start, texts
from anthropic_stub import SIGNATURE

#: one module, one worker: its live gateway is started once
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("claude-code")]


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory, local_model: None) -> Iterator[Gateway]:
    yield from start(tmp_path_factory.mktemp("claude-code"))


def result(run: Any) -> dict[str, Any]:
    assert run.returncode == 0, (run.stdout[-2000:], run.stderr[-2000:])
    out = json.loads(run.stdout)
    assert not out["is_error"], out
    return out  # type: ignore[no-any-return]


def session_file(gw: Gateway, session: str) -> Path:
    found = list((gw.home / ".claude" / "projects").rglob(f"{session}.jsonl"))
    assert len(found) == 1, found
    return found[0]


def test_claude_p_with_its_own_prompt_and_tools_is_answered_by_the_local_model(
        gw: Gateway) -> None:
    out = result(gw.claude("-p", "Say hello", "--output-format", "json"))
    with gw.open() as lm:
        trees = lm.trees()
        assert len(trees) == 1
        leaf = lm.leaves(trees[0].id)[0]
        path = lm.nodes(lm.path(leaf))
        assert [n.role for n in path] == ["system", "user", "system", "assistant"]
        assert texts(path[-1]) == out["result"]
        # the node keeps the whole request: Claude Code's system prompt, though the
        # model (a 256-token window) was sent only its head
        assert len(texts(path[0])) > 5000 and "Claude" in texts(path[0])
        assert texts(path[1]).endswith("Say hello")
        gen = lm.backend.provenance.get_generation(path[-1].provenance["generation"])
        request = json.loads(gen["request"])["gateway"]
        assert {t["name"] for t in request["tools"]} >= {"Bash", "Read", "Agent"}
        assert "claude-code" in request["anthropic-beta"]
        sent = json.loads(gen["provider_request"])
        assert sent["max_tokens"] == 64 and "tools" not in sent  # fitted, not recorded
    keep_fixture(session_file(gw, out["session_id"]), "claude-code-2.1.332-p.jsonl")


def test_claude_p_with_its_system_prompt_and_no_tools(gw: Gateway) -> None:
    out = result(gw.claude("-p", "Name a colour", "--system-prompt", "You are terse.",
                           "--tools", "", "--output-format", "json"))
    with gw.open() as lm:
        answer = [lm.node(t) for t in _answers(lm) if texts(lm.node(t)) == out["result"]]
        assert answer, out
        path = lm.nodes(lm.path(answer[0].id))
        assert path[0].role == "system" and texts(path[0]).endswith("You are terse.")
        gen = lm.backend.provenance.get_generation(answer[0].provenance["generation"])
        assert not json.loads(gen["request"])["gateway"].get("tools")


def _answers(lm: Any) -> list[str]:
    """Every assistant node the gateway recorded."""
    seen = {n for t in lm.trees() for leaf in lm.leaves(t.id) for n in lm.path(leaf)}
    return [n for n in seen if lm.node(n).role == "assistant"]


def test_continue_resume_and_fork_grow_one_tree_through_the_recording_proxy(
        gw: Gateway) -> None:
    first = result(gw.claude("-p", "First question", "--model", "upstream",
                             "--output-format", "json"))
    session = first["session_id"]
    second = result(gw.claude("-c", "-p", "Second question", "--model", "upstream",
                              "--output-format", "json"))
    assert second["session_id"] == session
    forked = result(gw.claude("--resume", session, "--fork-session", "-p", "Forked question",
                              "--model", "upstream", "--output-format", "json"))
    assert forked["session_id"] != session
    third = result(gw.claude("--resume", session, "-p", "Third question", "--model",
                             "upstream", "--output-format", "json"))
    with gw.open() as lm:
        ends = {}
        for reply in (first, second, forked, third):
            found = [leaf for leaf in _answers(lm) if texts(lm.node(leaf)) == reply["result"]]
            assert len(found) == 1, reply["result"]
            ends[reply["result"]] = found[0]
        trees = {lm.node(n).tree for n in ends.values()}
        assert len(trees) == 1  # one conversation: continued, resumed and forked
        fork_path = lm.path(ends[forked["result"]])
        third_path = lm.path(ends[third["result"]])
        # a branch of the same tree: the fork and the resumed session share everything
        # up to the second answer, and nothing was copied
        shared = [a for a, b in zip(fork_path, third_path, strict=False) if a == b]
        assert lm.node(shared[-1]).role == "assistant"
        assert texts(lm.node(shared[-1])) == second["result"]
        tree = lm.tree(trees.pop())
        assert tree.nodes == len(set(fork_path) | set(third_path))
        # the stub's signed thinking came back with every re-sent turn: kept in the
        # answer node, left out of the match
        node = lm.node(ends[first["result"]])
        assert node.content[0] == {"type": "thinking", "thinking": "Thinking 1.",
                                   "signature": SIGNATURE}
    # what went upstream is what Claude Code sent (its cache marks, its beta header)
    assert all(h.get("anthropic-beta", "").startswith("claude-code")
               for h in gw.stub.headers)
    assert any("cache_control" in json.dumps(r["system"]) for r in gw.stub.requests)
    # the session file Claude Code wrote imports as the same conversation
    imported = _imported(gw, session_file(gw, session))
    with gw.open() as lm:
        recorded = [(n.role, texts(n)) for n in lm.nodes(lm.path(ends[third["result"]]))
                    if n.role == "assistant"]
    assert [t for r, t in imported if r == "assistant"] == [t for _, t in recorded]
    keep_fixture(session_file(gw, session), "claude-code-2.1.332-resumed.jsonl")
    keep_fixture(session_file(gw, forked["session_id"]), "claude-code-2.1.332-forked.jsonl")
    # the forked session's file, imported or watched after the original's, is a branch
    # of the original's tree: its copied lines are the nodes stored, nothing copied
    with gw.open() as lm:
        recorded_fork = [texts(n) for n in lm.nodes(fork_path) if n.role == "assistant"]
    files = [session_file(gw, session), session_file(gw, forked["session_id"])]
    for use, url, folder in _stores(gw.home / "fork-imports"):
        _fork_lands_as_a_branch(use, url, folder, files, forked["result"], third["result"],
                                recorded_fork)


def _stores(home: Path) -> Iterator[tuple[str, str, Path]]:
    """(use, a fresh store, a folder of its own) for each backend the tests run on:
    one store imports the two files, one watches them."""
    for kind in [b for b in os.environ.get("LOOMDB_TEST_BACKENDS", "sqlite,postgres").split(",")
                 if b]:
        for use in ("import", "watch"):
            folder = home / f"{kind}-{use}"
            folder.mkdir(parents=True)
            if kind == "sqlite":
                yield use, str(folder / "store"), folder
                continue
            from pg import fresh_postgres_url

            with fresh_postgres_url(migrated=True) as url:
                yield use, url + ("&" if "?" in url else "?") + f"blobs=file://{folder}", folder


def _fork_lands_as_a_branch(use: str, url: str, folder: Path, files: list[Path],
                            fork_answer: str, last_answer: str,
                            recorded_fork: list[str]) -> None:
    import shutil

    import loomdb
    from loomdb.interop.watch import Watcher
    from loomdb.settings import Settings

    original, fork = files
    with loomdb.open(url, settings=Settings()) as lm:
        if use == "watch":  # a projects folder watched: the original, then the fork
            project = folder / "projects" / "-work"
            project.mkdir(parents=True)
            watcher = Watcher(lm, project.parent)
            shutil.copyfile(original, project / original.name)
            assert [i.error for i in watcher.step()] == [None]
            shutil.copyfile(fork, project / fork.name)
            done = watcher.step()
            assert [(i.error, i.report.nodes if i.report else 0) for i in done] == [(None, 2)]
        else:
            lm.import_file(original)
            report = lm.import_file(fork)  # told from its lines
            assert report.format == "claude_code" and not report.errors, report.errors
            assert report.nodes == 2  # the forked question and its answer
        trees = lm.trees()
        assert len(trees) == 1, [t.title for t in trees]
        ends = {texts(lm.node(leaf)): leaf for leaf in lm.leaves(trees[0].id)}
        fork_path, main_path = lm.path(ends[fork_answer]), lm.path(ends[last_answer])
        shared = [a for a, b in zip(fork_path, main_path, strict=False) if a == b]
        assert len(fork_path) == len(shared) + 2  # nothing copied: a branch of two nodes
        assert len(lm.tree_nodes(trees[0].id)) == len(set(fork_path) | set(main_path))
        # the imported fork says what the gateway recorded of it
        assert [texts(n) for n in lm.nodes(fork_path) if n.role == "assistant"
                and texts(n)] == [t for t in recorded_fork if t]


def _imported(gw: Gateway, file: Path) -> list[tuple[str, str]]:
    """(role, text) along the main path of the session file imported into a new store."""
    import loomdb
    from loomdb.settings import Settings

    with loomdb.open(str(gw.home / f"imported-{file.stem}"), settings=Settings()) as lm:
        report = lm.import_file(file)  # today's files are told from their lines
        assert report.format == "claude_code" and not report.errors, report.errors
        tree = lm.trees()[0]
        head = max(lm.leaves(tree.id), key=lambda leaf: len(lm.path(leaf)))
        return [(n.role, texts(n)) for n in lm.nodes(lm.path(head))]


def test_a_small_session_and_its_fork_import_as_one_tree(gw: Gateway) -> None:
    """With its own short system prompt and no tools, Claude Code writes small files:
    kept as the fixtures the fork import's tests read (LOOMDB_KEEP_FIXTURES=1)."""
    terse = ("--system-prompt", "You are terse.", "--tools", "", "--model", "upstream",
             "--output-format", "json")
    first = result(gw.claude("-p", "Small first question", *terse))
    forked = result(gw.claude("--resume", first["session_id"], "--fork-session", "-p",
                              "Small forked question", *terse))
    third = result(gw.claude("--resume", first["session_id"], "-p", "Small second question",
                             *terse))
    files = [session_file(gw, first["session_id"]), session_file(gw, forked["session_id"])]
    with gw.open() as lm:
        ends = {texts(lm.node(n)): n for n in _answers(lm)}
        recorded_fork = [texts(n) for n in lm.nodes(lm.path(ends[forked["result"]]))
                         if n.role == "assistant"]
    for use, url, folder in _stores(gw.home / "small-fork-imports"):
        _fork_lands_as_a_branch(use, url, folder, files, forked["result"], third["result"],
                                recorded_fork)
    keep_fixture(files[0], "claude-code-2.1.332-small.jsonl")
    keep_fixture(files[1], "claude-code-2.1.332-small-forked.jsonl")


def test_a_subagent_call_records_the_call_its_conversation_and_the_result(
        gw: Gateway) -> None:
    out = result(gw.claude("-p", "SUBAGENT: ask a helper", "--model", "upstream",
                           "--output-format", "json"))
    with gw.open() as lm:
        main = [leaf for leaf in _answers(lm) if texts(lm.node(leaf)) == out["result"]]
        assert len(main) == 1
        path = lm.nodes(lm.path(main[0]))
        calls = [b for n in path for b in n.content if b["type"] == "tool_use"]
        results = [b for n in path for b in n.content if b["type"] == "tool_result"]
        assert [c["name"] for c in calls] == ["Agent"]
        assert results and results[0]["tool_use_id"] == calls[0]["id"]
        # the subagent's own conversation went through the gateway too: its prompt
        asked = [t for t in lm.trees() if any(
            "Reply with the word done." in texts(n) for leaf in lm.leaves(t.id)
            for n in lm.nodes(lm.path(leaf)))]
        assert asked
    keep_fixture(session_file(gw, out["session_id"]), "claude-code-2.1.332-subagent.jsonl")
