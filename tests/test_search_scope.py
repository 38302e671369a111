"""A user's search is filtered in the query, not after it: what the caller sees (their
trees, documents and collections) goes into the search SQL (full text) and the
semantic ranking's mask, so a user gets a full page of their own hits however many of
another user's would rank above them, and another user's entries are never ranked.

Filtered after the ranking, a page of `limit` hits taken from the whole store holds
none of the user's here (the other user's all rank higher): the operator's own page
shows that. Run on both backends, in every mode."""

from __future__ import annotations

import pytest

from loomdb import Loom
from loomdb.search import SEARCH, chunks
from loomdb.search import dialects as D
from loomdb.search import service as S
from loomdb.search.storage import Scope
from loomdb.users import Owner, add_user, authenticate

MODES = ["text", "semantic", "hybrid"]


def _user(loom: Loom, name: str) -> Owner:
    _, token = add_user(loom, name)
    user = authenticate(loom, token)
    assert user is not None
    return Owner(loom, user)


def _stores(loom: Loom) -> tuple[Owner, Owner, set[str]]:
    """Bob: 40 short messages that are all about marmalade (they rank first in every
    mode); Alice: three long ones that mention it, a document and a collection item."""
    alice, bob = _user(loom, "alice"), _user(loom, "bob")
    a, b = loom.as_(alice), loom.as_(bob)
    b.trees.new("marmalade", session="bob-1")
    b.trees.new("marmalade", session="bob-2")
    for i in range(38):
        loom.append("bob-1" if i % 2 else "bob-2", "marmalade")
    mine = set()
    _, first = a.trees.new("the long story of a summer at the farm, the apple harvest, "
                           "and at the very end a jar of marmalade", session="alice")
    mine.add(first.id)
    for text in ("a letter about the weather, the garden and the neighbours, and one "
                 "line on the marmalade", "notes from the market: cheese, bread, "
                 "eggs, onions, some marmalade and flowers"):
        mine.add(loom.append("alice", text).id)
    a.documents.new("pantry", "shelves of pickles, chutney and one marmalade jar")
    a.collections.new("shopping")
    a.collections.add("shopping", first.id, tags=["marmalade"])
    return alice, bob, mine


@pytest.mark.parametrize("mode", MODES)
def test_a_user_gets_every_hit_of_theirs_under_a_limit_others_fill(
        loom: Loom, mode: str) -> None:
    alice, bob, mine = _stores(loom)
    limit = 5  # alice has exactly five matches; bob has forty that rank above them
    if mode != "text":  # ranked over what is embedded: the backlog first, as the worker would
        loom.search("warm up", mode="semantic")
        loom.search.reindex()

    whole = loom.search("marmalade", mode=mode, limit=limit)
    assert len(whole) == limit and not {h["entity"] for h in whole} & mine  # filtered
    # after the ranking, this page would have held none of alice's

    hits = loom.as_(alice).search("marmalade", mode=mode, limit=limit)
    kinds = sorted(h["kind"] for h in hits)
    assert kinds == ["document", "item", "message", "message", "message"], hits
    assert {h["entity"] for h in hits if h["kind"] == "message"} == mine
    assert [h for h in hits if h["kind"] == "document"][0]["entity"].startswith("doc:pantry@")
    assert [h for h in hits if h["kind"] == "item"][0]["entity"].startswith("coll:shopping/")

    theirs = loom.as_(bob).search("marmalade", mode=mode, limit=50)
    assert len(theirs) == 40 and all(h["kind"] == "message" for h in theirs)
    assert not {h["entity"] for h in theirs} & mine


def test_the_query_itself_ranks_only_the_scope(loom: Loom) -> None:
    """Under the front door: the full-text statement given a scope returns only the
    scope's entries, however deep it is asked to go."""
    alice, _, mine = _stores(loom)
    scope = loom.as_(alice).search.sight.scope()
    S.search(loom, S.Query("marmalade"))  # indexes what was written
    q = S.Query("marmalade", limit=1000)
    with loom.unit(SEARCH) as db:
        # (PostgreSQL with `rum` ranks from the tail and sealed chunks)
        tables = chunks.chunk_tables(db) if chunks.ranked(loom, db) else None
        rows, none, every = [
            D.storage(db).query(db, ["marmalade"], q, None, 1000, tables, given)
            for given in (scope, Scope(), None)]
    assert {r[0] for r in rows if r[1] == "message"} == mine and len(rows) == 5
    assert none == [] and len(every) == 45


@pytest.mark.parametrize("mode", MODES)
def test_a_user_with_nothing_finds_nothing(loom: Loom, mode: str) -> None:
    _stores(loom)
    carol = _user(loom, "carol")
    assert loom.as_(carol).search("marmalade", mode=mode) == []


def test_a_tree_filter_stays_within_the_users_trees(loom: Loom) -> None:
    alice, _, mine = _stores(loom)
    hits = loom.as_(alice).search("marmalade", tree="alice", limit=20)
    assert {h["entity"] for h in hits} == mine
