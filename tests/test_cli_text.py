"""What the CLI prints for people: `show` with the overlay, `tree` with labels for
blocks that are not text and with tags, `select` refusing what is not on the path."""

from __future__ import annotations

import json
from pathlib import Path

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


def test_bookmark_list_and_view_delete(store: tuple[str, dict[str, str]]) -> None:
    db, ids = store
    code, out, err = run_cli(db, "bookmark", "list", "--json")
    assert code == 0, err
    assert [(b["name"], b["node"]) for b in json.loads(out)["bookmarks"]] == [("best", ids["look"])]
    code, out, _ = run_cli(db, "bookmark", "list")
    assert out.startswith(f"best\t{ids['look']}")
    assert run_cli(db, "view", "new", "v", ids["root"], "--json")[0] == 0
    code, out, err = run_cli(db, "view", "delete", "v", "--json")
    assert code == 0 and json.loads(out) == {"deleted": "v"}
    code, out, _ = run_cli(db, "view", "delete", "s", "--json")  # a session is no view
    assert code == 2 and "is a session, not a view" in json.loads(out)["error"]["message"]
    assert json.loads(run_cli(db, "session", "show", "s", "--json")[1])["name"] == "s"


def test_edges_in_and_out_by_type(store: tuple[str, dict[str, str]]) -> None:
    db, ids = store
    code, out, err = run_cli(db, "link", ids["root"], ids["look"], "--type", "annotation", "--json")
    assert code == 0, err
    edge = json.loads(out)["id"]
    code, out, err = run_cli(db, "edges", ids["look"], "--json")
    assert code == 0, err
    shown = json.loads(out)
    assert shown["node"] == ids["look"]
    assert shown["incoming"] == {"continuation": [{"node": ids["root"]}],
                                 "annotation": [{"node": ids["root"], "edge": edge}]}
    assert shown["outgoing"] == {"continuation": [{"node": ids["call"]}]}
    code, out, _ = run_cli(db, "edges", ids["root"], "--json")
    outgoing = json.loads(out)["outgoing"]
    assert outgoing["annotation"] == [{"node": ids["look"], "edge": edge}]
    assert {e["node"] for e in outgoing["continuation"]} == {ids["look"], ids["other"]}
    code, out, _ = run_cli(db, "edges", ids["look"])
    assert f"<- annotation   {ids['root']}  (edge {edge})" in out


def test_rename_a_tree(store: tuple[str, dict[str, str]]) -> None:
    db, _ = store
    code, out, err = run_cli(db, "rename", "s", "Weather talk", "--json")
    assert code == 0, err
    assert json.loads(out)["title"] == "Weather talk"
    assert json.loads(run_cli(db, "trees", "--json")[1])["trees"][0]["title"] == "Weather talk"
    code, out, _ = run_cli(db, "rename", "s", "  ", "--json")
    assert code == 2 and "title" in json.loads(out)["error"]["message"]


def test_fork_lineage_in_session_show_trees_and_tree(store: tuple[str, dict[str, str]]) -> None:
    db, ids = store
    assert run_cli(db, "fork", "s~2", "alt", "--json")[0] == 0
    assert run_cli(db, "fork", "alt", "beta", "--json")[0] == 0
    shown = json.loads(run_cli(db, "session", "show", "beta", "--json")[1])
    at = json.loads(run_cli(db, "path", "s~2", "--json")[1])["nodes"][-1]
    assert shown["forked_from"] == {"ref": "alt", "node": at}
    assert json.loads(run_cli(db, "session", "show", "s", "--json")[1])["forked_from"] is None
    tree = json.loads(run_cli(db, "trees", "--json")[1])["trees"][0]
    assert [(f["name"], f["from"]["ref"]) for f in tree["forks"]] == [("alt", "s"), ("beta", "alt")]
    code, out, _ = run_cli(db, "trees")
    assert f"session alt: forked from s at {at[-8:]}" in out
    code, out, _ = run_cli(db, "tree", "s")
    assert f"session beta: forked from alt at {at[-8:]}" in " ".join(out.split())
    view = json.loads(run_cli(db, "tree", "s", "--json")[1])
    assert {f["name"] for f in view["forks"]} == {"alt", "beta"}


def test_a_tree_thousands_of_messages_deep_prints_as_json_and_as_a_column(
        tmp_path: Path) -> None:
    """A chain deeper than any recursion limit: `tree --json` is flat nodes linked by id
    (nested objects once broke the writer, and would break a reader), and the drawing
    indents only at branch points. (What is read is the same on every backend; the
    conformance suite holds that, so one SQLite file shows the printing.)"""
    store_url = str(tmp_path / "deep")
    with loomdb.open(store_url) as lm:
        tree, root = lm.new_tree("the start", session="s")
        with lm.unit(loomdb.users.USERS):
            for i in range(6_000):
                lm.append("s", f"step {i}", role="user")
        side = lm.append("s~3", "a branch near the end", role="assistant")
    code, out, err = run_cli(store_url, "tree", tree.id, "--json")
    assert code == 0, err
    view = json.loads(out)
    assert len(view["nodes"]) == 6_002 and view["roots"] == [root.id]
    by_id = {n["id"]: n for n in view["nodes"]}
    assert by_id[side.id]["parent"] in by_id and side.id in by_id[by_id[side.id]["parent"]]["children"]
    code, out, err = run_cli(store_url, "tree", tree.id)
    assert code == 0, err
    lines = [line for line in out.splitlines() if "step " in line]
    assert len(lines) == 6_000
    starts = {indent(line) for line in lines[:5_990]}
    assert len(starts) == 1, "a run of single continuations is one column"
    # the branch point's two branches indent one step, each under its first message
    end = out.splitlines()[-6:]
    branch = next(i for i, line in enumerate(end) if "a branch near the end" in line)
    assert indent(end[branch]) == indent(lines[0]) + 4, out[-800:]


def indent(line: str) -> int:
    return len(line) - len(line.lstrip("│├└─ "))
