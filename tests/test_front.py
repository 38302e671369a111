"""The front door's areas act for an explicit caller: the operator sees the whole store,
a user only what they own, and another user's thing reads exactly as an unknown one,
on every area, in the library itself (the HTTP API is one call on these)."""

from __future__ import annotations

import pytest

from loomdb import InvalidInput, Loom, NotFound, Unauthorized
from loomdb.users import Owner, add_user, authenticate


def _user(loom: Loom, name: str) -> Owner:
    _, token = add_user(loom, name)
    user = authenticate(loom, token)
    assert user is not None
    return Owner(loom, user)


def test_a_user_sees_their_own_and_the_operator_sees_everything(loom: Loom) -> None:
    alice, bob = _user(loom, "alice"), _user(loom, "bob")
    a, b = loom.as_(alice), loom.as_(bob)
    tree, node = a.trees.new("alice's plan for the garden", session="alice-main")
    a.documents.new("alice-notes", "tomatoes by the fence")
    a.collections.new("alice-list")
    a.collections.add("alice-list", node.id)

    assert [t.id for t in a.trees.list()] == [tree.id]
    assert b.trees.list() == []
    assert {t.id for t in loom.as_(loom.operator).trees.list()} >= {tree.id}
    assert [d["document"] for d in b.documents.list()] == []
    assert "alice-notes" in [d["document"] for d in loom.documents.list()]
    for call in (lambda: b.nodes.show(node.id), lambda: b.documents.show("alice-notes"),
                 lambda: b.collections.show("alice-list"), lambda: b.trees.get(tree.id),
                 lambda: b.refs.get("alice-main"), lambda: b.trees.map(tree.id),
                 lambda: b.collections.add("alice-list", node.id)):
        with pytest.raises(NotFound):
            call()
    assert a.nodes.show("alice-main")["id"] == node.id


def test_search_and_backlinks_hold_only_what_the_caller_sees(loom: Loom) -> None:
    alice, bob = _user(loom, "alice"), _user(loom, "bob")
    a, b = loom.as_(alice), loom.as_(bob)
    _, mine = a.trees.new("the marmalade recipe wants bitter oranges")
    b.trees.new("bob also writes about marmalade")
    found = {h["entity"] for h in a.search("marmalade")}
    assert mine.id in found and len(found) == 1
    assert len(loom.search("marmalade")) == 2
    a.documents.new("jam", "see the recipe")
    a.references.link("doc:jam", mine.id, "cites")
    assert [x["from"] for x in a.references.backlinks(mine.id)] == ["doc:jam"]
    with pytest.raises(NotFound):
        b.references.backlinks(mine.id)
    with pytest.raises(NotFound):
        b.references.link("tree:" + mine.tree, "doc:jam")


def test_only_the_operator_collects_garbage(loom: Loom) -> None:
    alice = _user(loom, "alice")
    with pytest.raises(Unauthorized, match="loomdb gc"):
        loom.as_(alice).gc.collect(dry_run=True)
    assert set(loom.gc.collect(dry_run=True)) >= {"contents"}


def test_a_user_s_subagent_tree_is_theirs_from_the_transaction_that_makes_it(
        loom: Loom) -> None:
    """The child tree is claimed as it is made: a child whose turn then fails (here: a
    model that does not exist) is still the user's, never a tree without owner."""
    alice, bob = _user(loom, "alice"), _user(loom, "bob")
    a, b = loom.as_(alice), loom.as_(bob)
    a.trees.new("plan the garden", session="alice-garden")
    with pytest.raises(InvalidInput, match="no-such-model"):
        a.agents.spawn("alice-garden", "list three vegetables", models=["no-such-model"])
    [child] = [t for t in a.trees.list() if t.lineage]
    assert child.lineage["spawned"]["session"] == "alice-garden"
    assert child.id not in {t.id for t in b.trees.list()}


def test_agents_personas_and_messages_are_the_operator_s(loom: Loom) -> None:
    alice = _user(loom, "alice")
    for call in (lambda: loom.as_(alice).agents.personas(),
                 lambda: loom.as_(alice).agents.set_persona("critic", system="be terse"),
                 lambda: loom.as_(alice).agents.add_agent("ann", "human"),
                 lambda: loom.as_(alice).agents.inbox("ann"),
                 lambda: loom.as_(alice).agents.route("persona", "critic")):
        with pytest.raises(Unauthorized):
            call()
    loom.agents.set_persona("critic", system="be terse")
    assert [p.name for p in loom.agents.personas()] == ["critic"]
    assert loom.agents.persona("critic").system == "be terse"
    assert [a.name for a in loom.agents.list_agents()] == []


def test_only_the_operator_keeps_a_retention_or_sweeps(loom: Loom) -> None:
    alice = _user(loom, "alice")
    with pytest.raises(Unauthorized):
        loom.as_(alice).gc.set_retention("90d")
    with pytest.raises(Unauthorized):
        loom.as_(alice).gc.sweep("1d", dry_run=True)
    assert loom.gc.set_retention("90d") == "90d" and loom.gc.retention() == "90d"
    assert loom.gc.sweep("90d", dry_run=True)["trees"] == []
