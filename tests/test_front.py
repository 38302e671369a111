"""The front door's areas act for an explicit caller: the operator sees the whole store,
a user only what they own, and another user's thing reads exactly as an unknown one,
on every area, in the library itself (the HTTP API is one call on these)."""

from __future__ import annotations

import pytest

from loomdb import Loom, NotFound, Unauthorized
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
