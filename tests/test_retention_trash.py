"""Retention that never loses silently, on both backends: `gc --older-than` and a
whole-tree delete set trees aside in the trash (hidden from listings and search,
restorable), a later gc purges them once their grace period is over (through the
forget's delete and its record, naming the rule), holds keep a tree from retention and
purges, and `--export-to` writes what a purge takes before it goes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import thread
from loomdb import InvalidInput, Loom, NotFound, Unauthorized


def tree_of(loom: Loom, node: str) -> str:
    return loom.node(node).tree


def listed(loom: Loom) -> set[str]:
    door = loom.as_(loom.operator)
    return {t.id for t in door.trees.list()} | {t.id for t in door.trees.list(archived=True)}


def age(loom: Loom, tree: str, when: str = "2020-01-01T00:00:00.000000Z") -> None:
    """Make a tree look untouched since `when` (its row and its nodes' times: the chain
    covers those, so an aged tree kept no longer verifies)."""
    with loom.backend.transaction():
        loom.backend.execute("UPDATE trees SET created_at = ?, updated_at = ? WHERE id = ?",
                             (when, when, tree))
        loom.backend.execute("UPDATE nodes SET created_at = ? WHERE tree_id = ?",
                             (when, tree))


def grace_over(loom: Loom) -> None:
    with loom.backend.transaction():
        loom.backend.execute("UPDATE trash SET purge_after = '2021-01-01T00:00:00.000000Z'")


def test_delete_tree_goes_to_the_trash_with_its_sessions_and_comes_back(loom: Loom) -> None:
    ids = thread(loom, ["trash-me question", "trash-me answer"])
    loom.view("a-view", ids[1])
    tree = tree_of(loom, ids[0])
    kept = thread(loom, ["kept question"], session="other")
    put = loom.forget.trash_tree(tree, reason="tidying")
    assert put["id"] == tree and put["rule"] == "delete" and put["reason"] == "tidying"
    assert put["purge_after"] > put["trashed_at"]
    assert listed(loom) == {tree_of(loom, kept[0])}
    assert [e["id"] for e in loom.forget.trash()] == [tree]
    hits = loom.search("trash-me")
    assert hits == []
    assert {r.name for r in loom.refs(tree=tree)} == {"main", "a-view"}  # untouched
    door = loom.as_(loom.operator)
    assert {r.name for r in door.refs.list()} == {"other"}  # hidden with their tree
    assert {r.name for r in door.refs.list(tree=tree)} == {"main", "a-view"}
    assert loom.forget.restore(tree)["id"] == tree
    assert tree in listed(loom) and loom.forget.trash() == []
    assert {h["tree"] for h in loom.search("trash-me")} == {tree}
    with pytest.raises(NotFound):
        loom.forget.restore(tree)
    # --now: gone for good with its own sessions and views, no --force needed
    done = loom.forget.purge_tree(tree, reason="asked")
    assert done.trees_deleted == [tree] and sorted(done.refs) == ["a-view", "main"]
    assert loom.forget.log(limit=1)[0]["action"] == "delete"
    assert loom.verify().ok


def test_retention_trashes_then_purges_after_the_grace_with_its_rule(
        loom: Loom, tmp_path: Path) -> None:
    old = thread(loom, ["old question", "old answer"])
    fresh = thread(loom, ["fresh question"], session="fresh")
    old_tree = tree_of(loom, old[0])
    age(loom, old_tree)
    plan = loom.gc.sweep("365d", dry_run=True)
    assert [t["id"] for t in plan["trees"]] == [old_tree] and plan["keep_for"] == "30d"
    assert loom.gc.sweep("365d")["trashed"] == 1
    assert listed(loom) == {tree_of(loom, fresh[0])}
    assert loom.gc.sweep("365d")["trashed"] == 0  # already there
    assert loom.gc.purge() == []  # its 30 days are not over
    (line,) = loom.forget.trash()
    assert line["rule"] == "retention 365d" and "not touched since" in line["reason"]
    assert line["nodes"] == 2
    assert loom.gc.set_trash_for("0s") == "0s" and loom.gc.trash_for() == "0s"
    (line,) = loom.forget.trash()  # what the trash holds has the new grace too
    assert line["purge_after"] == line["trashed_at"]
    loom.gc.set_trash_for("30d")
    assert loom.forget.trash()[0]["purge_after"] > line["trashed_at"]
    with pytest.raises(InvalidInput):
        loom.gc.set_trash_for("soon")
    # the grace ends: the next gc purges, exporting first
    grace_over(loom)
    assert [e["id"] for e in loom.gc.purge(dry_run=True)] == [old_tree]
    out = tmp_path / "exported"
    (done,) = loom.gc.purge(export_to=str(out))
    assert done["id"] == old_tree
    doc = json.loads((out / f"{old_tree}.json").read_text())
    assert [t["tree"]["id"] for t in doc["trees"]] == [old_tree]
    assert loom.forget.trash() == []
    with pytest.raises(NotFound):
        loom.tree(old_tree)
    record = loom.forget.log(limit=1)[0]
    assert record["action"] == "retention" and record["target"] == f"tree:{old_tree}"
    assert record["reason"].startswith("retention 365d: in the trash since")
    assert sorted(record["ids"]) == sorted(old)
    assert loom.verify().ok


def test_a_hold_keeps_a_tree_from_retention_and_purges(loom: Loom) -> None:
    by_tree = thread(loom, ["held by tree"])
    by_session = thread(loom, ["held by session"], session="keep-me")
    free = thread(loom, ["not held"], session="free")
    trees = [tree_of(loom, i[0]) for i in (by_tree, by_session, free)]
    for t in trees:
        age(loom, t)
    assert loom.forget.hold(f"tree:{trees[0]}", reason="legal")["kind"] == "tree"
    assert loom.forget.hold("keep-me")["tree"] == trees[1]
    with pytest.raises(NotFound):
        loom.forget.hold("no-such-session")
    assert {h["tree"] for h in loom.forget.holds()} == set(trees[:2])
    swept = loom.gc.sweep("365d")
    assert swept["trashed"] == 1 and swept["held"] == sorted(trees[:2])
    # a held tree set aside by hand stays in the trash past its grace, and --now refuses
    loom.forget.trash_tree(trees[0])
    grace_over(loom)
    assert [e["id"] for e in loom.gc.purge()] == [trees[2]]
    assert [e["id"] for e in loom.forget.trash()] == [trees[0]]
    assert loom.forget.trash()[0]["held"]
    with pytest.raises(InvalidInput, match="held"):
        loom.forget.purge_tree(trees[0])
    loom.forget.unhold(f"tree:{trees[0]}")
    with pytest.raises(NotFound):
        loom.forget.unhold(f"tree:{trees[0]}")
    assert [e["id"] for e in loom.gc.purge()] == [trees[0]]
    assert [h["name"] for h in loom.forget.holds()] == ["keep-me"]
    # a tree written to while in the trash comes back out at the purge, not purged
    again = thread(loom, ["used again"], session="again")
    loom.forget.trash_tree(tree_of(loom, again[0]))
    with loom.backend.transaction():
        loom.backend.execute("UPDATE trash SET trashed_at = '2022-01-01T00:00:00.000000Z'")
    grace_over(loom)
    loom.append("again", "one more", role="assistant")
    assert loom.gc.purge() == [] and loom.forget.trash() == []
    assert tree_of(loom, again[0]) in listed(loom)
    assert loom.tree(trees[1]).nodes == 1  # (its times were aged: no verify here)


def test_a_users_trash_is_their_own(loom: Loom) -> None:
    from test_front import _user as make

    alice, bob = make(loom, "alice"), make(loom, "bob")
    a, b = loom.as_(alice), loom.as_(bob)
    tree, _ = a.trees.new("alice's secret garden", session="alice-main")
    with pytest.raises(NotFound):
        b.forget.trash_tree(tree.id)
    a.forget.trash_tree(tree.id)
    assert [e["id"] for e in a.forget.trash()] == [tree.id] and b.forget.trash() == []
    assert [t.id for t in a.trees.list()] == []
    assert a.search("garden") == []
    with pytest.raises(NotFound):
        b.forget.restore(tree.id)
    with pytest.raises(NotFound):
        b.forget.hold(f"tree:{tree.id}")
    with pytest.raises(Unauthorized):
        a.gc.purge()
    with pytest.raises(Unauthorized):
        a.forget.purge_tree(tree.id, export_to="/tmp/x")
    a.forget.hold("alice-main")
    assert b.forget.holds() == [] and len(a.forget.holds()) == 1
    a.forget.restore(tree.id)
    assert [t.id for t in a.trees.list()] == [tree.id]
