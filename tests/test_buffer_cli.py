"""`loomdb buffer` and `loomdb generate` on buffer trees: arguments, JSON shapes, exits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from test_bad_input import run_cli

pytestmark = pytest.mark.xdist_group("local-model")


class Cli:
    def __init__(self, db: str) -> None:
        self.db = db

    def __call__(self, *args: str) -> dict:
        code, out, err = run_cli(self.db, *args, "--json")
        assert code == 0, err
        return json.loads(out)

    def text(self, *args: str) -> str:
        code, out, err = run_cli(self.db, *args)
        assert code == 0, err
        return out

    def fails(self, *args: str) -> str:
        code, out, err = run_cli(self.db, *args, "--json")
        assert code == 2 and json.loads(out)["error"], (code, out, err)
        return err


@pytest.fixture
def cli(store_url: str) -> Cli:
    c = Cli(store_url)
    c("new", "--mode", "buffer", "--text", "Once upon a time, ", "--session", "doc")
    return c


def test_the_draft_shows_in_the_document_and_is_edited_by_append_set_and_file(
    cli: Cli, tmp_path: Path
) -> None:
    assert cli("buffer", "doc") == {"text": "Once upon a time, ", "draft": ""}
    assert cli("buffer", "doc", "--append", "a cat") == {
        "text": "Once upon a time, a cat", "draft": "a cat"}
    assert cli("buffer", "doc", "--append", " sat")["draft"] == "a cat sat"
    assert cli("buffer", "doc", "--set", "a dog")["text"] == "Once upon a time, a dog"
    f = tmp_path / "draft.txt"
    f.write_text("from a file ✓", "utf-8")
    assert cli("buffer", "doc", "--file", str(f))["draft"] == "from a file ✓"
    assert cli.text("buffer", "doc") == "Once upon a time, from a file ✓\n"


def test_generate_commits_the_draft_and_prints_it_first(cli: Cli) -> None:
    cli("buffer", "doc", "--set", "a fox ")
    nodes = cli("generate", "doc", "-n", "2", "--max-tokens", "4")["nodes"]
    assert len(nodes) == 3
    draft = cli("show", nodes[0])
    assert (draft["role"], draft["source"], draft["content"][0]["text"]) == ("user", "human", "a fox ")
    assert cli("children", nodes[0])["nodes"] == nodes[1:]
    assert cli("session", "show", "doc")["node"] == nodes[1]
    assert cli("buffer", "doc")["draft"] == ""
    assert cli("buffer", "doc")["text"].startswith("Once upon a time, a fox ")


def test_authorship_json_and_colour(cli: Cli) -> None:
    cli("add", "doc", "--role", "assistant", "--source", "agent", "--author", "local",
        "--text", "there was a fox.")
    cli("buffer", "doc", "--edit", "30:33", "--text", "hen")  # fox -> hen, by the human
    cli("buffer", "doc", "--append", " END")
    out = cli("buffer", "doc", "--authorship")
    assert out["text"] == "Once upon a time, there was a hen. END"
    assert set(out) == {"text", "spans"}
    assert all(set(s) == {"start", "end", "author", "node"} for s in out["spans"])
    assert [(out["text"][s["start"]:s["end"]], s["author"]) for s in out["spans"]] == [
        ("Once upon a time, ", "human"), ("there was a ", "local"), ("hen", "human"),
        (".", "local"), (" END", "human")]
    assert out["spans"][-1]["node"] is None
    coloured = cli.text("buffer", "doc", "--authorship")
    assert "\x1b[34mthere was a \x1b[0mhen\x1b[34m.\x1b[0m END" in coloured


def test_edit_commit_alternatives_switch_and_diverge(cli: Cli) -> None:
    root = cli("path", "doc")["nodes"][0]
    cli("buffer", "doc", "--set", "first")
    first = cli("buffer", "doc", "--commit")["node"]
    assert cli("buffer", "doc", "--commit") == {"node": None}
    second = cli("add", root, "--role", "user", "--text", "second")["node"]
    alts = cli("buffer", "doc", "--alternatives", "1")
    assert [(a["node"], a["current"]) for a in alts["branches"]] == [(first, True), (second, False)]
    assert "* " + first in cli.text("buffer", "doc", "--alternatives", "-1")
    cli("view", "new", "v", "doc")
    edited = cli("buffer", "v", "--edit", "18:19", "--text", "F")["nodes"]
    assert len(edited) == 1 and cli("buffer", "v")["text"] == "Once upon a time, First"
    assert cli("buffer", "doc")["text"] == "Once upon a time, first"
    div = cli("buffer", "doc", "--diverge", "v")
    assert (div["kind"], div["index"], div["a"], div["b"]) == ("version", 1, [first], edited)
    done = cli("buffer", "doc", "--switch", second)
    assert done == {"ref": "doc", "head": second, "moved": True, "selected": []}
    assert cli("buffer", "doc")["text"] == "Once upon a time, second"
    assert "branch at position 1" in cli.text("buffer", "doc", "--diverge", "v")


def test_errors_exit_2_and_write_nothing(cli: Cli) -> None:
    root = cli("path", "doc")["nodes"][0]
    assert "session or view" in cli.fails("buffer", root, "--append", "x")
    assert "one action" in cli.fails("buffer", "doc", "--append", "x", "--commit")
    assert "START:END" in cli.fails("buffer", "doc", "--edit", "3", "--text", "x")
    assert "--edit" in cli.fails("buffer", "doc", "--text", "x")
    assert "range" in cli.fails("buffer", "doc", "--edit", "0:99", "--text", "x")
    cli("new", "--text", "chat", "--session", "chat")
    assert "dialogue" in cli.fails("buffer", "chat", "--set", "x")
    assert cli("buffer", "doc") == {"text": "Once upon a time, ", "draft": ""}
