"""`loomdb watch DIR`: session files followed as they are written. The passes are run
one by one here (`Watcher.step`), so each test decides exactly what the watcher sees;
one test runs the real command and stops it with Ctrl-C (SIGINT)."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
from pathlib import Path

from claude_code_lines import SessionWriter, call, text

from loomdb.interop.watch import HEAD


def _nodes(loom, session: str) -> int:
    return sum(len(loom.tree_nodes(t.id)) for t in loom.trees()
               if t.lineage["imported"]["conversation"] == session)


def _head_text(loom, session: str) -> str:
    tree = next(t for t in loom.trees() if t.lineage["imported"]["conversation"] == session)
    ref = loom.refs("session", tree.id)[0]
    return loom.node(ref.node).content[0].get("text", "")


def test_new_lines_become_nodes_and_the_session_moves(loom, tmp_path: Path) -> None:
    projects = tmp_path / "projects"
    w = SessionWriter(projects / "-work-app" / "s1.jsonl", "s1")
    watcher = loom.watcher(projects)
    u = w.user(None, "hello")
    [done] = watcher.step()
    assert done.report.nodes == 1
    a = w.reply(u, "m1", text("hi"))
    w.user(a, "more")
    [done] = watcher.step()
    assert done.report.nodes == 2 and _head_text(loom, "s1") == "more"
    assert watcher.step() == []  # nothing changed, nothing read
    log = loom.ref_log(loom.refs("session", loom.trees()[0].id)[0].name)
    assert log[-1].reason.startswith("import:")


def test_a_file_with_no_whole_line_yet_is_not_an_error(loom, tmp_path: Path) -> None:
    folder = tmp_path / "p"
    folder.mkdir()
    (folder / "s1.jsonl").write_text('{"parentUuid": null, "type": "us', encoding="utf-8")
    [done] = loom.watcher(folder).step()
    assert done.error is None and done.report.nodes == 0


def test_a_new_sessions_summary_line_bookmarks_the_leaf_already_stored(
    loom, tmp_path: Path
) -> None:
    folder = tmp_path / "projects" / "-work-app"
    first = SessionWriter(folder / "s1.jsonl", "s1")
    leaf = first.reply(first.user(None, "hello"), "m1", text("hi"))
    watcher = loom.watcher(tmp_path / "projects")
    watcher.step()
    later = SessionWriter(folder / "s2.jsonl", "s2")
    later.write({"type": "summary", "summary": "First chat", "leafUuid": leaf})
    later.user(None, "new day")
    [done] = watcher.step()
    assert done.report.warnings == [] and done.report.nodes == 1
    tree = next(t for t in loom.trees() if t.lineage["imported"]["conversation"] == "s1")
    [mark] = [r for r in loom.refs("bookmark") if r.tree == tree.id]
    assert mark.name.endswith("/First-chat") and loom.node(mark.node).role == "assistant"


def test_a_half_written_last_line_waits_for_the_rest(loom, tmp_path: Path) -> None:
    folder = tmp_path / "p"
    w = SessionWriter(folder / "s1.jsonl", "s1")
    u = w.user(None, "one")
    line = json.dumps({"parentUuid": u, "type": "user", "uuid": "u2", "sessionId": "s1",
                       "message": {"role": "user", "content": "two"},
                       "timestamp": "2026-01-02T11:00:00Z"}) + "\n"
    with open(folder / "s1.jsonl", "a", encoding="utf-8") as fh:
        fh.write(line[:40])
    watcher = loom.watcher(folder)
    watcher.step()
    assert _nodes(loom, "s1") == 1
    with open(folder / "s1.jsonl", "a", encoding="utf-8") as fh:
        fh.write(line[40:-1])  # all of it but the newline: complete JSON, not yet a line
    watcher.step()
    assert _nodes(loom, "s1") == 1
    with open(folder / "s1.jsonl", "a", encoding="utf-8") as fh:
        fh.write("\n")
    watcher.step()
    assert _nodes(loom, "s1") == 2


def test_a_restarted_watch_imports_nothing_twice(loom, tmp_path: Path) -> None:
    folder = tmp_path / "p"
    w = SessionWriter(folder / "s1.jsonl", "s1")
    u = w.user(None, "one")
    loom.watcher(folder).step()
    w.reply(u, "m1", text("two"))  # written while no watch ran
    [done] = loom.watcher(folder).step()
    assert (done.report.nodes, done.report.skipped) == (1, 1)
    [again] = loom.watcher(folder).step()
    assert again.report.nodes == 0


def test_a_subagent_file_that_grows_extends_its_child_tree(loom, tmp_path: Path) -> None:
    folder = tmp_path / "p"
    w = SessionWriter(folder / "s1.jsonl", "s1")
    u = w.user(None, "research")
    a = w.reply(u, "m1", call("t1", "Task", prompt="dig"))
    sub = SessionWriter(folder / "s1" / "subagents" / "agent-x1.jsonl", "s1")
    q = sub.user(None, "dig", isSidechain=True)
    w.result(a, "t1", "dug", toolUseResult={"agentId": "x1"})
    watcher = loom.watcher(folder)
    watcher.step()
    assert _nodes(loom, "s1/agent-x1") == 1
    sub.reply(q, "m7", text("found"), isSidechain=True)
    [done] = watcher.step()
    assert done.path.name == "s1.jsonl" and done.report.nodes == 1
    assert _nodes(loom, "s1/agent-x1") == 2


def test_a_running_subagent_is_linked_before_its_result_comes_back(loom, tmp_path) -> None:
    from loomdb.agents.subagents import children

    folder = tmp_path / "p"
    w = SessionWriter(folder / "s1.jsonl", "s1")
    u = w.user(None, "research")
    a = w.reply(u, "m1", call("t1", "Task", prompt="dig deep"))
    sub = SessionWriter(folder / "s1" / "subagents" / "agent-x2.jsonl", "s1")
    sub.user(None, "dig deep", isSidechain=True)
    watcher = loom.watcher(folder)
    watcher.step()
    kid = next(t for t in loom.trees() if "spawned" in t.lineage)
    parent_node = kid.lineage["spawned"]["node"]
    assert [(c.tree, c.summary_node) for c in children(loom, parent_node)] == [(kid.id, None)]
    w.result(a, "t1", "dug", toolUseResult={"agentId": "x2"})
    watcher.step()
    [child] = children(loom, parent_node)
    assert child.summary_node is not None and loom.node(child.summary_node).role == "tool"


def test_links_are_not_followed(loom, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    SessionWriter(outside / "o.jsonl", "o").user(None, "not yours")
    folder = tmp_path / "p"
    SessionWriter(folder / "s1.jsonl", "s1").user(None, "mine")
    os.symlink(outside, folder / "linked")
    os.symlink(outside / "o.jsonl", folder / "o.jsonl")
    loom.watcher(folder).step()
    assert {t.lineage["imported"]["conversation"] for t in loom.trees()} == {"s1"}


def _read_line(proc: subprocess.Popen[str], sel: selectors.BaseSelector) -> str:
    """The command's next output line (a generous bound, so a broken watch fails the
    test instead of hanging it)."""
    assert sel.select(timeout=60), "watch printed nothing"
    return proc.stdout.readline() if proc.stdout else ""


def test_the_command_follows_and_stops_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    folder = tmp_path / "projects" / "-work-app"
    w = SessionWriter(folder / "s1.jsonl", "s1")
    u = w.user(None, "hello")
    env = {**os.environ, "LOOMDB_HOME": str(tmp_path / "store")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "loomdb", "watch", str(tmp_path / "projects"), "--json",
         "--interval", "0.05"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        sel = selectors.DefaultSelector()
        assert proc.stdout is not None
        sel.register(proc.stdout, selectors.EVENT_READ)
        first = json.loads(_read_line(proc, sel))
        assert first["nodes"] == 1 and first["file"].endswith("s1.jsonl")
        w.reply(u, "m1", text("hi"))
        second = json.loads(_read_line(proc, sel))
        assert (second["nodes"], second["trees"]) == (1, [])
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert err.strip().splitlines()[-1] == "stopped" and "Traceback" not in err


def test_a_codex_sessions_folder_is_followed_too(loom, tmp_path: Path) -> None:
    """A Codex rollout growing in `sessions/YYYY/MM/DD/` extends its tree pass by pass,
    and a restarted watch adds nothing (the real rollout, split where a line ends)."""
    fixtures = Path(__file__).parent.parent / "fixtures" / "agent-sessions" / "codex"
    [src] = list(fixtures.glob("*rollout-*.jsonl"))
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    day = tmp_path / "sessions" / "2025" / "11" / "17"
    day.mkdir(parents=True)
    rollout = day / src.name
    rollout.write_text("".join(lines[:20]), encoding="utf-8")
    watcher = loom.watcher(tmp_path / "sessions")
    [first] = watcher.step()
    assert first.error is None and first.report.nodes > 0
    with open(rollout, "a", encoding="utf-8") as fh:
        fh.write("".join(lines[20:]))
    [second] = watcher.step()
    assert second.error is None and second.report.nodes > 0
    [tree] = loom.trees()
    total = len(loom.tree_nodes(tree.id))
    assert total == first.report.nodes + second.report.nodes
    [again] = loom.watcher(tmp_path / "sessions").step()
    assert again.error is None and again.report.nodes == 0
    assert len(loom.tree_nodes(tree.id)) == total


class _Opens:
    """Every file opened through Python under a folder, with the bytes read from it."""

    def __init__(self, folder: Path) -> None:
        self.folder = str(folder)
        self.opened: list[str] = []
        self.read = 0

    def install(self, monkeypatch) -> None:
        import builtins
        import io

        real = builtins.open

        def counting(file, mode="r", *args, **kwargs):
            fh = real(file, mode, *args, **kwargs)
            if isinstance(file, (str, os.PathLike)) and os.fspath(file).startswith(self.folder):
                self.opened.append(os.path.basename(os.fspath(file)))
                return _Counted(fh, self)
            return fh

        monkeypatch.setattr(builtins, "open", counting)
        monkeypatch.setattr(io, "open", counting)


class _Counted:
    def __init__(self, fh, opens: _Opens) -> None:
        self._fh, self._opens = fh, opens

    def read(self, *args):
        data = self._fh.read(*args)
        self._opens.read += len(data)
        return data

    def readline(self, *args):
        data = self._fh.readline(*args)
        self._opens.read += len(data)
        return data

    def __iter__(self):
        return iter(self.readline, self._fh.read(0))

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self._fh.close()

    def __getattr__(self, name):
        return getattr(self._fh, name)


def test_a_pass_opens_only_the_files_that_changed_and_reads_past_the_last_read(
    loom, tmp_path: Path, monkeypatch
) -> None:
    folder = tmp_path / "projects" / "-work-app"
    writers = [SessionWriter(folder / f"s{i}.jsonl", f"s{i}") for i in range(40)]
    heads = [w.user(None, f"hello {i} " + "word " * 1200) for i, w in enumerate(writers)]
    assert all(w.path.stat().st_size > HEAD for w in writers)
    watcher = loom.watcher(tmp_path / "projects")
    assert len(watcher.step()) == 40
    opens = _Opens(tmp_path)
    opens.install(monkeypatch)
    assert watcher.step() == [] and opens.opened == []  # nothing changed: nothing opened

    grown = folder / "s7.jsonl"
    writers[7].reply(heads[7], "m1", text("hi"))
    opens.opened = []
    [done] = watcher.step()
    assert done.path == grown and done.report.nodes == 1
    assert set(opens.opened) == {"s7.jsonl"}

    os.utime(folder / "s3.jsonl", ns=(1, 1))  # touched, nothing added
    half = '{"parentUuid": null, "ty'
    with open(folder / "s5.jsonl", "a", encoding="utf-8") as fh:
        fh.write(half)  # no whole line yet: nothing imported
    opens.opened, opens.read = [], 0
    assert watcher.step() == []
    assert sorted(opens.opened) == ["s3.jsonl", "s5.jsonl"]
    # each: its first bytes (was it rewritten?), then only what follows the last read
    assert opens.read == 2 * HEAD + len(half)


def test_a_rewritten_file_is_read_whole_again(loom, tmp_path: Path) -> None:
    folder = tmp_path / "p"
    w = SessionWriter(folder / "s1.jsonl", "s1")
    u = w.user(None, "one")
    w.reply(u, "m1", text("two"))
    watcher = loom.watcher(folder)
    [first] = watcher.step()
    assert first.report.nodes == 2
    other = SessionWriter(folder / "s1.jsonl.new", "s2")
    other.user(None, "another conversation, written over the first")
    os.replace(folder / "s1.jsonl.new", folder / "s1.jsonl")  # smaller, another head
    [again] = watcher.step()
    assert again.error is None and again.report.nodes == 1 and len(again.report.trees) == 1
