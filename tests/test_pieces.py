"""Prompt pieces on both backends: versions by hash, stored once; a thread names a piece
by a block or as its system piece and its context holds the piece's text (the newest
version, or the pinned one); templates start threads; a name nobody has (or another
user's) is refused at write in one line with nothing written, and a stored reference
is followed at read by its exact id, only to the reading tree owner's pieces; limits;
the CLI; simonw/llm's fragments and templates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import row_counts
from loomdb import InvalidInput, Loom, NotFound
from loomdb.limits import Limits
from loomdb.pieces import service as P
from loomdb.users import Owner, add_user
from test_bad_input import run_cli

RUBRIC = "Grade on clarity, accuracy and brevity."


def texts(ctx: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["role"], "".join(b.get("text", "") for b in m["content"]))
            for m in ctx["messages"]]


def test_versions_are_added_by_hash_and_read_back(loom: Loom) -> None:
    me = loom.as_(loom.operator).pieces
    first = me.add("rubric", RUBRIC)
    assert first["added"] and first["version"] == 1 and first["hash"].startswith("sha256:")
    assert me.add("rubric", RUBRIC)["added"] is False  # the same text adds nothing
    second = me.add("rubric", RUBRIC + " Be kind.")
    assert second["version"] == 2 and second["hash"] != first["hash"]
    assert [v["version"] for v in me.log("rubric")] == [1, 2]
    assert me.show("rubric")["text"] == RUBRIC + " Be kind."
    assert me.show("rubric@1")["text"] == RUBRIC
    assert me.show("rubric@" + first["hash"][7:19])["version"] == 1
    assert me.show("rubric@" + second["hash"])["version"] == 2
    assert [(p["name"], p["versions"]) for p in me.list()] == [("rubric", 2)]
    with pytest.raises(InvalidInput, match="names no version"):
        me.show("rubric@9")
    with pytest.raises(NotFound):
        me.log("ghost")


def test_a_block_is_the_newest_version_or_the_pinned_one(loom: Loom) -> None:
    me = loom.as_(loom.operator)
    me.pieces.add("rubric", RUBRIC)
    tree, root = loom.new_tree([{"piece": "rubric"}, {"type": "text", "text": "Grade this."}],
                               session="s")
    loom.append("s", [{"piece": "rubric@1"}], role="user")
    stored = root.content[0]
    assert stored["type"] == "piece" and stored["piece"] == "rubric" and len(stored["id"]) == 26
    assert texts(loom.context("s")) == [("user", RUBRIC + "Grade this."), ("user", RUBRIC)]
    me.pieces.add("rubric", "New rubric.")
    assert texts(loom.context("s")) == [("user", "New rubric.Grade this."), ("user", RUBRIC)]
    assert me.nodes.context("s")["messages"][0]["content"][0]["text"] == "New rubric."
    assert {u["tree"] for u in me.pieces.used_by("rubric")} == {tree.id}
    assert len(me.pieces.used_by("rubric")) == 2


def test_a_system_piece_and_a_template_start_a_thread(loom: Loom) -> None:
    me = loom.as_(loom.operator)
    me.pieces.add("voice", "You answer like a weaver.")
    me.pieces.add("facts", "Looms hold warp threads.")
    tpl = {"system": "Be brief.", "system_piece": "voice", "pieces": ["facts"],
           "options": {"temperature": 0}, "model": "local", "prompt": "Question: $input"}
    assert me.pieces.add("weaving", json.dumps(tpl), kind="template")["kind"] == "template"
    tree, _ = me.trees.new("what is a loom?", template="weaving", session="t")
    ctx = loom.context("t")
    assert texts(ctx) == [("system", "You answer like a weaver.Be brief."),
                          ("user", "Looms hold warp threads.Question: what is a loom?")]
    assert ctx["options"] == {"temperature": 0, "model": "local"}
    assert tree.title == "Question: what is a loom?"
    plain, _ = me.trees.new("hi", system_piece="voice", session="p")
    assert texts(loom.context("p"))[0] == ("system", "You answer like a weaver.")
    with pytest.raises(InvalidInput, match="is a template"):
        loom.new_tree([{"piece": "weaving"}])
    with pytest.raises(InvalidInput, match="unknown fields"):
        me.pieces.add("bad", json.dumps({"sytem": "x"}), kind="template")
    with pytest.raises(InvalidInput, match="names no piece"):
        me.pieces.add("bad", json.dumps({"pieces": ["ghost"]}), kind="template")


def test_an_unknown_piece_is_refused_in_one_line_and_nothing_is_written(loom: Loom) -> None:
    loom.new_tree("first", session="s")
    before = row_counts(loom)
    for call in (lambda: loom.append("s", [{"piece": "ghost"}]),
                 lambda: loom.new_tree([{"piece": "ghost"}]),
                 lambda: loom.append("s", "x", options={"system_piece": "ghost"})):
        with pytest.raises(InvalidInput) as err:
            call()
        assert "\n" not in str(err.value) and "ghost" in str(err.value)
    loom.as_(loom.operator).pieces.add("real", "text")
    before = row_counts(loom)
    with pytest.raises(InvalidInput, match="names no version"):
        loom.append("s", [{"piece": "real@abcdef"}])
    assert row_counts(loom) == before


def test_a_users_pieces_are_theirs_alone(loom: Loom) -> None:
    ann_user, _ = add_user(loom, "ann")
    bob_user, _ = add_user(loom, "bob")
    ann, bob = loom.as_(Owner(loom, ann_user)), loom.as_(Owner(loom, bob_user))
    ann.pieces.add("secret", "ann's rubric")
    with pytest.raises(InvalidInput, match="taken"):
        bob.pieces.add("secret", "bob's")
    with pytest.raises(NotFound):
        bob.pieces.show("secret")
    assert bob.pieces.list() == []
    _, root = bob.trees.new("hello", session="b")
    before = row_counts(loom)
    for call in (lambda: bob.nodes.append("b", [{"piece": "secret"}]),
                 lambda: bob.trees.new("x", system_piece="secret"),
                 lambda: bob.nodes.append("b", [{"piece": "secret", "id": "0" * 26}])):
        with pytest.raises(InvalidInput, match="names no piece"):
            call()
    assert row_counts(loom) == before
    # a reference stored in bob's tree anyway (the operator wrote it) reads as not
    # available to bob's tree, by its exact id, whatever it names
    loom.append("b", [{"piece": "secret"}])
    assert texts(bob.nodes.context("b"))[-1] == ("user", "[piece secret is not available]")
    ann.trees.new([{"piece": "secret"}], session="a")
    assert texts(ann.nodes.context("a")) == [("user", "ann's rubric")]
    assert len(ann.pieces.used_by("secret")) == 1  # bob's tree is not listed to ann


def test_limits_refuse_in_one_line(store_url: str) -> None:
    with Loom.open(store_url, limits=Limits(piece=16, pieces=1)) as lm:
        me = lm.as_(lm.operator).pieces
        for name, text, why in (("x" * 101, "t", "1-100"), ("a@b", "t", "1-100"),
                                ("big", "y" * 17, "over the limit"), ("e", "", "non-empty")):
            with pytest.raises(InvalidInput, match=why) as err:
                me.add(name, text)
            assert "\n" not in str(err.value)
        me.add("one", "t")
        with pytest.raises(InvalidInput, match="LOOMDB_LIMIT_PIECES"):
            me.add("two", "t")
        assert [p["name"] for p in me.list()] == ["one"]


def test_the_cli(store_url: str, tmp_path: Path) -> None:
    def run(*args: str) -> Any:
        code, out, err = run_cli(store_url, *args, "--json")
        assert code == 0, err
        return json.loads(out)

    text = tmp_path / "rubric.txt"
    text.write_text(RUBRIC, "utf-8")
    added = run("piece", "add", "rubric", str(text))
    assert added["version"] == 1
    assert run("piece", "add", "rubric", "--text", "v2")["version"] == 2
    assert [v["version"] for v in run("piece", "log", "rubric")["versions"]] == [1, 2]
    assert run("piece", "show", "rubric@1")["text"] == RUBRIC
    assert run("piece", "list")["pieces"][0]["name"] == "rubric"
    tpl = json.dumps({"system_piece": "rubric@1", "model": "local"})
    run("piece", "add", "grader", "--text", tpl, "--template")
    made = run("new", "--text", "grade me", "--template", "grader", "--session", "g")
    assert run("piece", "used-by", "rubric")["used_by"] == [{"tree": made["tree"],
                                                              "node": made["node"]}]
    ctx = run("context", "g")
    assert ctx["messages"][0] == {"role": "system", "content": [{"type": "text",
                                                                  "text": RUBRIC}]}
    code, _, err = run_cli(store_url, "new", "--content-json", '[{"piece": "nope"}]')
    assert code != 0 and "names no piece 'nope'" in err and len(err.strip().splitlines()) == 1


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(min_size=1, max_size=200).filter(lambda t: "\x00" not in t),
       n=st.integers(min_value=1, max_value=6), pinned=st.booleans())
def test_a_piece_used_by_many_threads_is_stored_once(loom: Loom, text: str, n: int,
                                                     pinned: bool) -> None:
    me = loom.as_(loom.operator).pieces
    name = f"p{abs(hash((text, n, pinned))) % 10**9}"
    try:
        me.add(name, text)
    except InvalidInput:  # (a text with a lone surrogate is no text)
        return
    before = P.stored_bodies(loom)
    spec = f"{name}@1" if pinned else name
    for i in range(n):
        loom.new_tree([{"piece": spec}, {"type": "text", "text": f" #{i}"}], session=f"{name}-{i}")
    assert P.stored_bodies(loom) == before
    for i in range(n):
        assert texts(loom.context(f"{name}-{i}")) == [("user", f"{text} #{i}")]
    assert len(me.used_by(name)) == n


def test_a_piece_in_a_merged_branch_is_expanded_where_it_is_merged(loom: Loom) -> None:
    me = loom.as_(loom.operator)
    me.pieces.add("finding", "The warp holds.")
    _, root = loom.new_tree("start", session="main")
    loom.fork(root.id, "side")
    loom.append("side", [{"piece": "finding"}], role="assistant")
    loom.append("main", "meanwhile", role="assistant")
    me.branches.merge("side", "main")
    said = [t for _, t in texts(loom.context("main"))]
    assert said[:3] == ["start", "meanwhile", "The warp holds."]
    assert '"piece"' not in json.dumps(loom.context("main"))


def test_a_redacted_text_is_redacted_in_the_pieces_holding_it(loom: Loom) -> None:
    me = loom.as_(loom.operator)
    me.pieces.add("leak", "the password is hunter2")
    loom.new_tree([{"piece": "leak"}], session="p")
    _, said = loom.new_tree("the password is hunter2", session="s")
    me.forget.redact(said.id)
    assert me.pieces.show("leak")["text"] == "[redacted]"
    assert texts(loom.context("p")) == [("user", "[redacted]")]
