"""What the CLI prints for people: `show` with the overlay, `tree` with labels for
blocks that are not text and with tags, `select` refusing what is not on the path."""

from __future__ import annotations

import json

import pytest

import loomdb
from test_bad_input import run_cli


@pytest.fixture
def store(store_url: str) -> tuple[str, dict[str, str]]:
    with loomdb.open(store_url) as lm:
        _, root = lm.new_tree("hello", session="s")
        ref = lm.put_blob(b"\x89PNG not really", "image/png")
        look = lm.append("s", [{"type": "text", "text": "look"},
                               {"type": "image", "ref": ref, "mime_type": "image/png"}],
                         role="assistant")
        lm.tag(look.id, "important", "todo")
        lm.bookmark(look.id, "best")
        lm.exclude(look.id)
        call = lm.append("s", [{"type": "tool_use", "id": "t1", "name": "weather",
                                "input": {"city": "Oslo"}}], role="assistant")
        lm.append("s", [{"type": "tool_result", "tool_use_id": "t1", "name": "weather",
                         "content": [{"type": "text", "text": "sunny"}]}], role="tool")
        lm.append("s", [{"type": "audio", "ref": ref, "mime_type": "audio/ogg"}], role="user")
        lm.append("s", [{"type": "document", "ref": ref, "mime_type": "application/pdf",
                         "text": "A long document"}], role="user")
        other = lm.append(root.id, "another answer", role="assistant")
    return store_url, {"root": root.id, "look": look.id, "call": call.id, "other": other.id}


def test_show_prints_the_overlay(store: tuple[str, dict[str, str]]) -> None:
    db, ids = store
    code, out, err = run_cli(db, "show", ids["look"])
    assert code == 0, err
    lines = out.splitlines()
    assert "bookmark best" in lines
    assert "tags    important, todo" in lines
    assert "flags   excluded" in lines
    code, out, _ = run_cli(db, "show", ids["root"])
    assert not any(line.startswith(("bookmark", "tags", "flags")) for line in out.splitlines())


def test_tree_labels_blocks_and_shows_tags(store: tuple[str, dict[str, str]]) -> None:
    db, _ = store
    code, out, err = run_cli(db, "tree", "s")
    assert code == 0, err
    drawn = " ".join(out.split())  # the terminal width may wrap a line
    for label in ("look [image]", "[tool_use weather]", "[tool_result weather] sunny",
                  "user: [audio]", "user: [document application/pdf]",
                  "#important #todo", "[excluded]", "<bookmark:best>"):
        assert label in drawn, (label, out)


def test_select_refuses_a_node_off_the_sessions_path(store: tuple[str, dict[str, str]]) -> None:
    db, ids = store
    before = json.loads(run_cli(db, "session", "show", "s", "--json")[1])
    code, out, err = run_cli(db, "select", "s", ids["other"], "--json")
    assert code == 2
    assert "is not a version of a message on 's''s path" in json.loads(out)["error"]["message"]
    assert json.loads(run_cli(db, "session", "show", "s", "--json")[1]) == before
    # a version of a message on the path is selected as before
    code, out, err = run_cli(db, "edit", ids["call"], "--text", "no tool after all", "--json")
    assert code == 0, err
    version = json.loads(out)["node"]
    code, _, err = run_cli(db, "select", "s", version, "--json")
    assert code == 0, err
    assert version in json.loads(run_cli(db, "path", "s", "--json")[1])["nodes"]
