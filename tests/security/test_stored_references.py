"""Issue 32, item 1: data naming another node is followed only where its writer and its
reader may go.

A native import stored `tree.lineage` as given, and `context` prepended a spawned tree's
parent path by resolving `lineage.spawned.node` with the whole headish grammar as the
operator: a one-node tree naming `bobmain`, `bobmain~1` or an id prefix showed another
user their whole thread, and an ambiguous prefix listed every user's ids. The rule now
(docs/security.md, "Stored references"): a reference is checked against its writer
when written (an import keeps it only for a node of the same import or one the
importer sees, else drops it with a warning), stored as an exact id, followed by that
exact id only, and only into a tree whoever reads the holder may read. A store may
already hold bad references (written before): they are attacked here too, written
into the store directly. Both backends, a live server, each shape of the class: the
lineage's node as a ref name, `~N`, `^`, a prefix short and long, a lowercased id,
another user's exact id, a fork's origin, the way a subagent's report goes back, a
collection item, and the candidates an unscoped lookup used to list."""

from __future__ import annotations

import io
import json
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from live import client, must

import loomdb
from loomdb import Loom, NotFound
from loomdb.agents.loop import Plan, Turn, hold
from loomdb.agents.subagents import report_back, start_child
from loomdb.agents.threads import spawn_depth
from loomdb.collections import service as K
from loomdb.users import Owner, User, add_user

from .import_world import upload

SECRET = "the vault code is 4711"


@dataclass
class World:
    lm: Loom
    base: str
    alice: User
    token: str  # alice's
    bob_tree: str
    bob_ids: list[str]  # bob's nodes, root first

    def leaks(self, text: str) -> list[str]:
        """What of bob's a response shows: his words, his ids (whole or lowercased)."""
        found = [SECRET] if SECRET in text else []
        return found + [i for i in self.bob_ids if i in text or i.lower() in text]


@pytest.fixture(scope="module")
def world(served: tuple[Loom, str]) -> World:
    lm, base = served
    alice, token = add_user(lm, "alice")
    bob, _ = add_user(lm, "bob")
    bob_door = lm.as_(Owner(lm, bob))
    tree, root = bob_door.trees.new(f"{SECRET}, first", session="bobmain")
    ids = [root.id] + [bob_door.nodes.append("bobmain", f"{SECRET}, turn {i}",
                                             role="assistant" if i % 2 else "user").id
                       for i in range(1, 4)]
    return World(lm, base, alice, token, tree.id, ids)


def _shapes(w: World) -> dict[str, dict[str, Any]]:
    """Every way a lineage can name bob's thread: name -> the `spawned` value."""
    first, last = w.bob_ids[0], w.bob_ids[-1]
    nodes = {"ref": "bobmain", "ref-up": "bobmain~1", "ref-caret": "bobmain^",
             "prefix-6": first[:6], "prefix-12": last[:12], "lowercase": last.lower(),
             "id-up": f"{last}~1", "exact": last}
    out = {k: {"tree": w.bob_tree, "node": v, "session": "bobmain"} for k, v in nodes.items()}
    out["exact-no-tree"] = {"node": last}
    return out


def _docs(folder: Path, n: int) -> list[dict[str, Any]]:
    """`n` tree documents of the attacker's own (made in a scratch store of theirs)."""
    with loomdb.open(str(folder / f"scratch-{secrets.token_hex(3)}")) as lm:
        for i in range(n):
            lm.new_tree(f"my question {i}", session=f"mine-{secrets.token_hex(4)}")
        out = io.StringIO()
        lm.export(out, format="jsonl")
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _jsonl(docs: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(d) + "\n" for d in docs).encode()


def _session(doc: dict[str, Any]) -> str:
    return str(doc["refs"][0]["name"])


def _read_as_alice(w: World, session: str) -> list[str]:
    """Everything alice may read of her tree at `session`, checked for bob's things."""
    with client(w.base, w.token) as c:
        context = c.get(f"/api/nodes/{session}/context")
        assert context.status_code == 200, context.text
        assert len(context.json()["messages"]) == 1, context.text  # her own message only
        page = c.get(f"/api/nodes/{session}/thread")
        assert page.status_code == 200, page.text
        lineage = must(c.get("/api/lineage"))
    mine = [t for t in lineage["trees"] if session in [r["name"] for r in t["refs"]]]
    assert mine and mine[0]["parent"] is None, mine
    shown = page.json()
    for tree in (shown["tree"], *mine):  # the lineage as stored is hers (she wrote it)
        tree.pop("lineage")
    return w.leaks(context.text + json.dumps(shown) + json.dumps(mine))


def test_an_import_keeps_no_lineage_into_another_users_thread(world: World,
                                                              tmp_path: Path) -> None:
    shapes = _shapes(world)
    docs = _docs(tmp_path, len(shapes))
    for doc, spawned in zip(docs, shapes.values(), strict=True):
        doc["tree"]["lineage"] = {"spawned": spawned, "imported": {"format": "x"}}
    r = upload(world.base, "lineage.jsonl", _jsonl(docs), world.token)
    assert r.status_code == 201, r.text
    report = r.json()
    assert len(report["trees"]) == len(shapes) and not report["errors"], report
    warned = [w for w in report["warnings"] if "lineage" in w["where"] + w["reason"]]
    assert len(warned) == len(shapes), report["warnings"]
    assert not world.leaks(r.text)
    for name, doc in zip(shapes, docs, strict=True):
        stored = world.lm.tree(doc["tree"]["id"]).lineage or {}
        assert "spawned" not in stored and stored.get("imported") == {"format": "x"}, name
        assert _read_as_alice(world, _session(doc)) == [], name


def test_a_stored_lineage_is_followed_only_to_the_readers_own_thread(
        world: World, tmp_path: Path) -> None:
    """Lineages a store already holds (written before imports checked them)."""
    shapes = _shapes(world)
    door = world.lm.as_(Owner(world.lm, world.alice))
    for name, spawned in shapes.items():
        tree, _ = door.trees.new(f"alice asks ({name})", session=f"alice-{name}-{secrets.token_hex(2)}")
        world.lm.backend.execute("UPDATE trees SET lineage = ? WHERE id = ?",
                                 (json.dumps({"spawned": spawned}), tree.id))
        session = [r.name for r in world.lm.refs("session", tree.id)][0]
        assert _read_as_alice(world, session) == [], name
        assert spawn_depth(world.lm, tree.id) == 0, name
        # the operator reading alice's thread stops there too (a turn run there would
        # write bob's thread into alice's tree)
        operator = world.lm.as_(world.lm.operator).nodes.context(session)
        assert not world.leaks(json.dumps(operator)), name


def test_an_import_keeps_lineage_within_itself_and_into_the_callers_own(
        world: World, tmp_path: Path) -> None:
    """What the rule keeps: a parent later in the same file (a whole-store export lists
    children first), and a parent the caller already has."""
    parent, child, grandchild = _docs(tmp_path, 3)
    root = parent["tree"]["root"]
    child["tree"]["lineage"] = {"spawned": {"tree": parent["tree"]["id"], "node": root,
                                            "session": _session(parent)}}
    r = upload(world.base, "family.jsonl", _jsonl([child, parent]), world.token)
    assert r.status_code == 201 and not r.json()["warnings"], r.text
    assert world.lm.tree(child["tree"]["id"]).lineage == child["tree"]["lineage"]
    grandchild["tree"]["lineage"] = {"spawned": {"tree": child["tree"]["id"],
                                                 "node": child["tree"]["root"]}}
    r = upload(world.base, "later.jsonl", _jsonl([grandchild]), world.token)
    assert r.status_code == 201 and not r.json()["warnings"], r.text
    with client(world.base, world.token) as c:
        context = must(c.get(f"/api/nodes/{_session(grandchild)}/context"))
        lineage = must(c.get("/api/lineage"))["trees"]
    assert [m["content"][0]["text"] for m in context["messages"]] == [
        d["nodes"][0]["content"][0]["text"] for d in (parent, child, grandchild)]
    by_id = {t["id"]: t for t in lineage}
    assert by_id[child["tree"]["id"]]["parent"]["message"] == 1


def test_a_forks_origin_names_only_a_node_of_its_own_tree(world: World,
                                                          tmp_path: Path) -> None:
    [doc] = _docs(tmp_path, 1)
    doc["refs"][0]["origin"] = {"forked_from": {"ref": "bobmain", "node": world.bob_ids[-1]}}
    r = upload(world.base, "fork.jsonl", _jsonl([doc]), world.token)
    assert r.status_code == 201 and "forked_from" in json.dumps(r.json()["warnings"]), r.text
    # and one a store already holds: its node is not looked up across trees
    tree, _ = world.lm.as_(Owner(world.lm, world.alice)).trees.new("forked?", session=f"f-{secrets.token_hex(3)}")
    name = [r.name for r in world.lm.refs("session", tree.id)][0]
    world.lm.backend.execute("UPDATE refs SET origin = ? WHERE name = ?", (json.dumps(
        {"forked_from": {"ref": "bobmain", "node": world.bob_ids[-1]}}), name))
    with client(world.base, world.token) as c:
        lineage = must(c.get("/api/lineage"))["trees"]
    refs = {r["name"]: r for t in lineage for r in t["refs"]}
    assert refs[_session(doc)]["forked_from"] is None
    assert refs[name]["forked_from"]["message"] is None  # bob's node's depth is not told
    assert refs[name]["forked_from"]["node"] is None
    mine = [t for t in lineage if t["id"] in (doc["tree"]["id"], tree.id)]
    assert len(mine) == 2 and not world.leaks(json.dumps(mine))


def test_a_subagents_report_goes_back_only_into_its_parents_own_thread(world: World) -> None:
    """`report_back` appended to `lineage.spawned.session` resolved across the store."""
    lm, alice = world.lm, world.alice
    tree, root = lm.as_(Owner(lm, alice)).trees.new("alice's task list", session=f"a-{secrets.token_hex(3)}")
    at = [r.name for r in lm.refs("session", tree.id)][0]
    bob_before = len(lm.tree_nodes(world.bob_tree))
    for name, spawned in {"bob's session": {"tree": tree.id, "node": root.id, "session": "bobmain"},
                          "bob's node": {"tree": world.bob_tree, "node": world.bob_ids[-1],
                                         "session": "bobmain"},
                          "a prefix": {"node": world.bob_ids[-1][:8], "session": "bobmain~1"},
                          }.items():
        child, session = start_child(lm, at, f"task {name}", None,
                                     on_child=lambda t: Owner(lm, alice).claim([t]))
        lm.backend.execute("UPDATE trees SET lineage = ? WHERE id = ?",
                           (json.dumps({"spawned": spawned}), child))
        done = lm.append(session, "done", role="assistant")
        report = report_back(lm, Turn([done], answer=done, session=session, steps=1))
        assert len(lm.tree_nodes(world.bob_tree)) == bob_before, name
        if name == "bob's session":  # the node it names is alice's: the report lands there
            assert report is not None and report.tree == tree.id and report.parent == root.id
        else:
            assert report is None, name


def test_a_collection_item_shows_nothing_its_reader_does_not_see(world: World) -> None:
    lm = world.lm
    coll = f"reading-{secrets.token_hex(3)}"
    with client(world.base, world.token) as c:
        must(c.post("/api/collections", json={"name": coll}), 201)
    # items a store already holds that name bob's things (added before the check)
    for entity in (world.bob_ids[-1], f"tree:{world.bob_tree}"):
        K.add(lm, coll, entity)
    with client(world.base, world.token) as c:
        shown = must(c.get(f"/api/collections/{coll}"))
    assert [i.get("dangling") for i in shown["items"]] == [True, True], shown
    assert SECRET not in json.dumps(shown)


def test_no_unscoped_lookup_lists_another_users_ids(world: World) -> None:
    """A call named wrongly was answered with every call waiting in the store (the HTTP
    edge drops an unknown name's candidates, the door's other edges did not); an
    ambiguous prefix of the store is no name of hers."""
    lm = world.lm
    _tree, theirs = lm.new_tree("the operator's agent asks", session=f"op-{secrets.token_hex(3)}")
    call = {"type": "tool_use", "id": "call_1", "name": "tally", "input": {}}
    waiting = lm.append(theirs.id, [call], role="assistant")
    hold(lm, Plan(theirs.id, None, None), waiting, [call])
    door = lm.as_(Owner(lm, world.alice))
    _, mine = door.trees.new("mine", session=f"m-{secrets.token_hex(3)}")
    for decide in (door.agents.approve, door.agents.deny):
        with pytest.raises(NotFound) as refused:
            decide(mine.id)
        assert waiting.id not in str(refused.value) and not refused.value.candidates
    with client(world.base, world.token) as c:
        r = c.get(f"/api/nodes/{world.bob_ids[0][:6]}/context")  # ambiguous store-wide
        assert not world.leaks(r.text), r.text
