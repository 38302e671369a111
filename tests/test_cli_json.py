"""`--json` works on every command: each takes it, and `export` and `chat` (one JSON
object per turn) print JSON and nothing else on stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from loomdb.cli import app
from test_bad_input import run_cli


def leaf_commands(command: click.Command, path: tuple[str, ...] = (),
                  ) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    if not isinstance(command, click.Group):
        yield path, command
        return
    for name, sub in command.commands.items():
        yield from leaf_commands(sub, (*path, name))


def test_every_command_takes_json() -> None:
    leaves = list(leaf_commands(app))
    assert len(leaves) > 60
    missing = [" ".join(path) for path, command in leaves
               if "--json" not in {opt for p in command.params for opt in p.opts}]
    assert missing == []


@pytest.fixture
def store(store_url: str) -> str:
    code, out, err = run_cli(store_url, "new", "--text", "hello there", "--session", "s", "--json")
    assert code == 0, err
    code, _, err = run_cli(store_url, "add", "s", "--role", "assistant", "--text", "hi", "--json")
    assert code == 0, err
    return store_url


def test_export_to_stdout_is_one_object_with_the_text(store: str) -> None:
    code, out, err = run_cli(store, "export", "s", "--format", "markdown", "--json")
    assert code == 0, err
    shown = json.loads(out)
    assert shown["format"] == "markdown" and shown["trees"] == 1 and shown["output"] is None
    assert "hello there" in shown["text"] and shown["bytes"] == len(shown["text"].encode())
    code, plain, _ = run_cli(store, "export", "s", "--format", "markdown")
    assert code == 0 and plain.rstrip("\n") == shown["text"].rstrip("\n")


def test_export_to_a_file_says_where_and_how_much(store: str, tmp_path: Path) -> None:
    target = tmp_path / "all.json"
    code, out, err = run_cli(store, "export", "--all", "-o", str(target), "--json")
    assert code == 0, err
    assert json.loads(out) == {"format": "json", "trees": 1, "output": str(target),
                               "bytes": target.stat().st_size}
    assert json.loads(target.read_text())["trees"][0]["tree"]


@pytest.mark.xdist_group("local-model")
def test_chat_prints_one_object_per_turn_and_only_json(tmp_path: Path) -> None:
    db = str(tmp_path / "store")
    lines = "say one word\n\nname a colour\nexit\n"
    done = subprocess.run(
        [sys.executable, "-m", "loomdb", "--db", db, "chat", "--session", "c", "-m", "local",
         "--max-tokens", "6", "--json"],
        input=lines, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 0, done.stderr
    turns = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(turns) == 2  # the empty line is no turn; exit ends the loop
    code, out, _ = run_cli(db, "path", "c", "--json")
    path = json.loads(out)["nodes"]
    assert [t["node"] for t in turns] == [path[1], path[3]]
    for turn in turns:
        assert turn["session"] == "c" and turn["moved"] is True and turn["text"]
        code, out, _ = run_cli(db, "show", turn["node"], "--json")
        assert json.loads(out)["content"][0]["text"] == turn["text"]


def test_a_failed_chat_turn_is_an_error_object_and_the_loop_goes_on(tmp_path: Path) -> None:
    db = str(tmp_path / "store")
    done = subprocess.run(
        [sys.executable, "-m", "loomdb", "--db", db, "chat", "--session", "c", "-m", "nosuchmodel",
         "--json"],
        input="one\ntwo\n", capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 0, done.stderr
    turns = [json.loads(line) for line in done.stdout.splitlines()]
    assert [t["error"]["type"] for t in turns] == ["InvalidInput", "InvalidInput"]
    code, out, _ = run_cli(db, "path", "c", "--json")
    assert len(json.loads(out)["nodes"]) == 2  # both user lines are kept
