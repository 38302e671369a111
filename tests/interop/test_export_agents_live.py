"""The real Codex CLI and pi (the npm devDependencies of tests/clients) and Claude Code
(the binary the claude-agent-sdk wheel bundles) read what `export --format codex | pi |
claude-code` writes, offline, and what they add comes back as a branch.

- Codex: `codex exec resume ID "and now?"` finds the exported rollout under CODEX_HOME,
  loads it and appends its turn to it before asking a model; the model is a provider
  on a closed loopback port, so the test stops Codex once the turn is in the file (no
  model is ever reached), and imports the file again.
- pi: `pi --export` turns a session into HTML without a model: it opens the exported
  session (the entries pi read are in the page), and it upgrades an old session file
  in place on the way, which imports again as the same tree.
"""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_export_claude_code import _coding_tree

from loomdb import Loom
from loomdb.interop.codex_export import file_name

NODE_BIN = Path(__file__).resolve().parents[1] / "clients" / "node_modules" / ".bin"
PI_V1 = (Path(__file__).resolve().parents[1] / "fixtures" / "agent-sessions" / "pi"
         / "pi_badlogic-pi-mono_coding-agent_test_fixtures_large-session.jsonl")


def tool(name: str) -> Path:
    found = NODE_BIN / name
    assert found.exists(), f"{name} is not installed: run `make install` (npm ci in tests/clients)"
    return found


@pytest.fixture(params=["sqlite"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """One backend: what is tested here is the agents reading the files."""
    return str(tmp_path / "store")


def _resume_until(command: list[str], env: dict[str, str], cwd: Path,
                  written: Callable[[], bool]) -> None:
    """Run an agent resuming a session until it has written the new turn (its model is a
    closed port: it writes the turn before asking), then stop it and its children."""
    run = subprocess.Popen(command, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not written():
            assert run.poll() is None, run.stdout.read().decode()[-2000:] if run.stdout else ""
            assert time.monotonic() < deadline, f"{command[0]} did not resume the session"
            time.sleep(0.1)
    finally:
        os.killpg(run.pid, signal.SIGTERM)
        run.wait(timeout=30)


def _lands_below(loom: Loom, file: Path, answer: Any) -> None:
    """Importing the resumed file grows the exported tree: the new turn under `answer`."""
    trees = [t.id for t in loom.trees()]
    report = loom.import_file(file)
    assert report.errors == [] and report.nodes >= 1
    assert [t.id for t in loom.trees()] == trees  # no copy: the exported tree grew
    ask = next(n for n in loom.tree_nodes(answer.tree)
               if n.content == [{"type": "text", "text": "and now?"}])
    assert answer.id in loom.path(ask.id)


def test_codex_resumes_the_exported_rollout_and_its_turn_lands_below_the_path(
    loom: Loom, tmp_path: Path
) -> None:
    _, answer, _ = _coding_tree(loom)
    home = tmp_path / "codex"
    staged = tmp_path / "rollout.jsonl"
    loom.export_file(staged, target=answer.id, format="codex", cwd=str(tmp_path))
    session = json.loads(staged.read_text("utf-8").splitlines()[0])["payload"]["id"]
    rollout = home / "sessions" / file_name(session)
    rollout.parent.mkdir(parents=True)
    staged.rename(rollout)
    dead = ('model_providers.dead={name="dead",base_url="http://127.0.0.1:9/v1",'
            'wire_api="responses",request_max_retries=0,stream_max_retries=0}')
    _resume_until([str(tool("codex")), "exec", "--skip-git-repo-check", "-c",
                   "model_provider=dead", "-c", dead, "-c", "model=m", "resume", session,
                   "and now?"],
                  {**os.environ, "CODEX_HOME": str(home), "OPENAI_API_KEY": "unused"},
                  tmp_path, lambda: '"text":"and now?"' in rollout.read_text("utf-8"))
    _lands_below(loom, rollout, answer)


def _session_data(html: Path) -> dict[str, object]:
    found = re.search(r'<script id="session-data" type="application/json">([^<]+)</script>',
                      html.read_text("utf-8"))
    assert found, "pi wrote no session data"
    return json.loads(base64.b64decode(found.group(1)))


def test_pi_reads_the_exported_session_and_upgrades_an_old_one_in_place(
    loom: Loom, tmp_path: Path
) -> None:
    _, answer, _ = _coding_tree(loom)
    out = tmp_path / "s.jsonl"
    loom.export_file(out, target=answer.id, format="pi", cwd=str(tmp_path))
    old = tmp_path / "old.jsonl"  # the first 60 values of a version-1 session
    old.write_text("".join(PI_V1.read_text("utf-8").splitlines(keepends=True)[:60]), "utf-8")
    first = loom.import_file(old)
    assert first.errors == [] and len(first.trees) == 1
    runs = [subprocess.Popen([str(tool("pi")), "--export", str(path), str(path) + ".html"],
                             env={**os.environ, "HOME": str(tmp_path), "PI_OFFLINE": "1"},
                             cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for path in (out, old)]  # side by side: each is mostly node starting up
    for run in runs:
        _, err = run.communicate(timeout=120)
        assert run.returncode == 0, err.decode()[-2000:]
    data = _session_data(Path(str(out) + ".html"))
    path = loom.path(answer.id)
    entries = data["entries"]
    assert isinstance(entries, list) and [e["id"] for e in entries][:len(path)] == path[:1] + [
        e["id"] for e in entries[1:len(path)]]
    assert data["leafId"] == answer.id and entries[0]["id"] == path[0]
    assert json.loads(old.read_text("utf-8").splitlines()[0])["version"] == 3  # upgraded
    again = loom.import_file(old)
    assert again.errors == [] and (again.nodes, again.trees) == (0, [])
    assert len(loom.trees()) == 2


def _user_line(path: Path, text: str) -> bool:
    """Whether Claude Code has written the user's message `text` (it first writes the
    prompt in a queue-operation record, then the message)."""
    for line in path.read_text("utf-8").splitlines():
        try:
            row = json.loads(line)
        except ValueError:  # a line being written
            continue
        if row.get("type") == "user" and text in json.dumps(row.get("message")):
            return True
    return False


def test_claude_code_resumes_the_exported_session_and_its_turn_lands_below_the_path(
    loom: Loom, tmp_path: Path
) -> None:
    """`claude --resume ID -p` (the binary the claude-agent-sdk wheel bundles) finds the
    exported session under its project folder (--cwd), appends the turn, and the file
    comes back as a branch below the exported answer. The API is a closed port: Claude
    Code writes the prompt before asking, and the test stops it once it is written."""
    import claude_agent_sdk

    claude = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    assert claude.is_file(), "claude-agent-sdk ships no claude binary"
    _, answer, _ = _coding_tree(loom)
    work = tmp_path / "work"
    work.mkdir()
    staged = tmp_path / "session.jsonl"
    loom.export_file(staged, target=answer.id, format="claude-code", cwd=str(work))
    session = json.loads(staged.read_text("utf-8").splitlines()[0])["sessionId"]
    project = tmp_path / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(work))
    project.mkdir(parents=True)
    session_file = project / f"{session}.jsonl"
    staged.rename(session_file)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "LANG": "C.UTF-8", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
           "ANTHROPIC_API_KEY": "unused", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
           "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1"}
    _resume_until([str(claude), "--resume", session, "-p", "and now?"], env, work,
                  lambda: _user_line(session_file, "and now?"))
    _lands_below(loom, session_file, answer)
