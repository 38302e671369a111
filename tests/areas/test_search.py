"""Full-text search: one results contract on SQLite FTS5 and PostgreSQL tsvector."""

from __future__ import annotations

from pathlib import Path

import pytest

from areas.cli import Cli
from loomdb import Loom
from loomdb.storage_ops import storage

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "interop"


@pytest.fixture
def cli(store_url: str) -> Cli:
    return Cli(store_url)


@pytest.fixture
def corpus(loom: Loom, cli: Cli) -> dict[str, str]:
    tree, root = loom.new_tree("How do glaciers carve valleys?", session="geo")
    answer = loom.append("geo", "Glaciers grind bedrock and carve U-shaped valleys.",
                         role="assistant", author="geologist")
    loom.tag(answer.id, "earth")
    other, lone = loom.new_tree("Recipes for sourdough bread", session="food")
    cli("doc", "new", "notes", "--text", "Field notes: glacier retreat in the Alps")
    cli("coll", "new", "reading", "--kind", "table")
    item = cli("coll", "add", "reading", "doc:notes", "--tag", "earth",
               "--field", "topic=glaciology")["item"]
    return {"tree": tree.id, "root": root.id, "answer": answer.id, "other": other.id,
            "bread": lone.id, "item": f"coll:reading/{item}"}


def test_messages_documents_and_items_are_found(cli: Cli, corpus: dict[str, str]) -> None:
    hits = cli("search", "glacier")["hits"]
    found = {h["entity"] for h in hits}
    assert {corpus["root"], corpus["answer"]} <= found
    assert any(e.startswith("doc:notes@") for e in found)
    for h in hits:
        assert set(h) <= {"entity", "kind", "tree", "snippet", "marks", "score", "role",
                          "created_at", "side", "leaf"}
        assert h["marks"] and all("glacier" in h["snippet"][a:b].lower() for a, b in h["marks"])
        assert "\x02" not in h["snippet"] and isinstance(h["score"], float)
    assert [h["kind"] for h in cli("search", "glaciology")["hits"]] == ["item"]
    assert cli("search", "glaciology")["hits"][0]["entity"] == corpus["item"]
    assert cli("search", "sourdough")["hits"][0] == {
        **cli("search", "sourdough")["hits"][0], "entity": corpus["bread"], "kind": "message",
        "tree": corpus["other"]}
    assert cli("search", "volcano")["hits"] == []


def test_words_are_stemmed_and_all_required(cli: Cli, corpus: dict[str, str]) -> None:
    assert corpus["answer"] in {h["entity"] for h in cli("search", "carving")["hits"]}
    both = cli("search", "glaciers bedrock")["hits"]
    assert [h["entity"] for h in both] == [corpus["answer"]]


def test_filters(cli: Cli, corpus: dict[str, str]) -> None:
    def ids(*args: str) -> set[str]:
        return {h["entity"] for h in cli("search", *args)["hits"]}

    assert ids("glacier", "--role", "assistant") == {corpus["answer"]}
    assert ids("glacier", "--author", "geologist") == {corpus["answer"]}
    assert ids("glacier", "--tree", corpus["tree"]) == {corpus["root"], corpus["answer"]}
    assert ids("glacier", "--tag", "earth") == {corpus["answer"]}
    assert ids("glaciology", "--tag", "earth") == {corpus["item"]}
    assert all(e.startswith("doc:") for e in ids("glacier", "--kind", "document"))
    assert len(cli("search", "glacier", "--limit", "1")["hits"]) == 1


def test_any_text_is_a_safe_query_and_bad_options_are_typed(cli: Cli,
                                                           corpus: dict[str, str]) -> None:
    assert cli("search", 'glacier" (-*')["hits"]
    assert cli("search", 'glacier" OR (NEAR -*')["hits"] == []  # every word is required
    assert "no words" in cli.fails("search", "?!")
    assert "kind" in cli.fails("search", "x", "--kind", "tree")
    assert "limit" in cli.fails("search", "x", "--limit", "0")


def test_edits_and_deletes_keep_the_index_right(cli: Cli, corpus: dict[str, str]) -> None:
    item_id = corpus["item"].rpartition("/")[2]
    cli("coll", "set", "reading", item_id, "topic=hydrology")
    assert cli("search", "glaciology")["hits"] == []
    assert [h["entity"] for h in cli("search", "hydrology")["hits"]] == [corpus["item"]]
    cli("coll", "rm", "reading", item_id)
    assert cli("search", "hydrology")["hits"] == []
    cli("doc", "rm", "notes")
    assert cli("search", "alps")["hits"] == []


def test_an_import_is_searchable_right_away(cli: Cli) -> None:
    cli("search", "warmup")  # the search area exists before the import: the trigger path
    cli("import", str(FIXTURES / "oasst_en_first10_trees.jsonl"))
    hits = cli("search", "401k plan")["hits"]
    assert hits and all("tree" in h for h in hits)


def test_nodes_written_before_search_existed_are_found(cli: Cli) -> None:
    cli("import", str(FIXTURES / "oasst_en_first10_trees.jsonl"))
    assert cli("search", "401k")["hits"]


def test_the_core_feeds_the_index_by_a_hook_not_a_trigger(loom: Loom, cli: Cli) -> None:
    """No trigger on the core's `nodes`: each node the core writes is queued by the
    search area's write hook, in the write's transaction (a rolled-back write queues
    nothing)."""
    from loomdb.search import SEARCH

    loom.new_tree("hooked root", session="s")
    assert cli("search", "hooked")["hits"]
    with loom.unit(SEARCH) as db:
        if db.dialect == "sqlite":
            found = db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' "
                               "AND tbl_name = 'nodes'")
        else:
            found = db.execute("SELECT tgname FROM pg_trigger t JOIN pg_class c "
                               "ON c.oid = t.tgrelid WHERE c.relname = 'nodes'")
    assert found == []
    node = loom.append("s", "queued by the hook", role="user")
    with loom.unit(SEARCH) as db:
        assert db.execute("SELECT node_id FROM search_pending") == [(node.id,)]
    with pytest.raises(RuntimeError), storage(loom).transaction():
        loom.append("s", "rolled back with its write", role="user")
        raise RuntimeError
    with loom.unit(SEARCH) as db:
        assert db.execute("SELECT node_id FROM search_pending") == [(node.id,)]
    assert [h["entity"] for h in cli("search", "queued")["hits"]] == [node.id]
    assert cli("search", "rolled")["hits"] == []


_OLD_TRIGGER = {
    "sqlite": ["CREATE TRIGGER search_node_written AFTER INSERT ON nodes BEGIN "
               "INSERT INTO search_pending (node_id) VALUES (new.id); END"],
    "postgres": ["CREATE FUNCTION search_node_written() RETURNS trigger LANGUAGE plpgsql AS "
                 "$$ BEGIN INSERT INTO search_pending (node_id) VALUES (NEW.id); "
                 "RETURN NULL; END $$",
                 "CREATE TRIGGER search_node_written AFTER INSERT ON nodes "
                 "FOR EACH ROW EXECUTE FUNCTION search_node_written()"],
}


def _as_before_the_hook(store_url: str, *, trigger: bool, unindexed: str | None) -> None:
    """Put a store's search area back as its first migration left it: the hand-over
    not recorded, the trigger on `nodes` there (or lost), a node never indexed."""
    import loomdb
    from loomdb.search import SEARCH

    with loomdb.open(store_url) as lm, lm.unit(SEARCH) as db:
        (hook,) = [n for n, _ in SEARCH.scripts(db.dialect) if "write_hook" in n]
        db.execute("DELETE FROM loomdb_migrations WHERE name = ?", (hook,))
        for stmt in _OLD_TRIGGER[db.dialect] if trigger else ():
            db.execute(stmt)
        if unindexed is not None:
            if db.dialect == "sqlite":
                db.execute("DELETE FROM search_text WHERE rowid IN "
                           "(SELECT seq FROM search_entries WHERE entity = ?)", (unindexed,))
            db.execute("DELETE FROM search_entries WHERE entity = ?", (unindexed,))


@pytest.mark.parametrize("trigger", [True, False], ids=["trigger", "trigger-lost"])
def test_a_store_with_the_old_trigger_hands_over_to_the_hook(
        store_url: str, cli: Cli, trigger: bool) -> None:
    """A store made before the hook has the trigger, or lost it (a core migration
    that rebuilt `nodes` dropped it, and the nodes written meanwhile were never
    queued): the area's next migration queues what a lost trigger missed and drops
    the trigger; every node is then found once."""
    import loomdb

    with loomdb.open(store_url) as lm:
        lm.new_tree("aurora over the fjord", session="s")
        missed = lm.append("s", "written while the trigger was gone", role="user")
    assert cli("search", "aurora")["hits"] and cli("search", "gone")["hits"]
    _as_before_the_hook(store_url, trigger=trigger, unindexed=None if trigger else missed.id)
    with loomdb.open(store_url) as lm:
        after = lm.append("s", "a meadow once the hook took over", role="user")
    assert [h["entity"] for h in cli("search", "gone")["hits"]] == [missed.id]
    assert [h["entity"] for h in cli("search", "meadow")["hits"]] == [after.id]
    assert len(cli("search", "aurora")["hits"]) == 1
    with loomdb.open(store_url) as lm:
        from loomdb.search import SEARCH

        with lm.unit(SEARCH) as db:
            assert db.execute("SELECT count(*) FROM search_pending") == [(0,)]
            assert db.one("SELECT count(*) FROM search_entries") == (3,)


def test_text_with_a_nul_character_is_indexed(loom: Loom, cli: Cli) -> None:
    loom.new_tree("root", session="s")  # (a NUL in a tree's title is the core's matter)
    loom.append("s", "alpha\x00omega", role="user")
    cli("doc", "new", "nul", "--text", "gamma\x00delta")
    assert cli("search", "omega")["hits"] and cli("search", "delta")["hits"]


def test_marks_are_spans_and_brackets_in_content_stay_text(loom: Loom, cli: Cli) -> None:
    """A snippet is plain text and its matches are spans: brackets in the content (and
    the marker characters themselves) are never taken for a mark."""
    loom.new_tree("def f(x: Dict[str, Any]) -> [list] of \x02quokka\x03 cases", session="b")
    hit = cli("search", "quokka")["hits"][0]
    assert "Dict[str, Any]" in hit["snippet"] and "[list]" in hit["snippet"]
    assert "\x02" not in hit["snippet"] and "\x03" not in hit["snippet"]
    assert [hit["snippet"][a:b] for a, b in hit["marks"]] == ["quokka"]


def test_a_message_hit_says_its_role_date_branch_and_latest_message(
        loom: Loom, cli: Cli) -> None:
    """The main line is the root's first continuation, then each one's first; a fork or
    a later version is a side branch; `leaf` is the latest message below the hit."""
    tree, root = loom.new_tree("Plan the walrus survey", session="main")
    first = loom.append("main", "Start at the north beach.", role="assistant")
    loom.append("main", "Thanks", role="user")
    loom.fork(first.id, "side")
    forked = loom.append("side", "What about walrus pups?", role="user")
    old = loom.append("side", "Count them apart.", role="assistant")
    newer = loom.append(forked.id, "Or skip them.", role="assistant")
    again = loom.edit(first.id, "Start at the south walrus beach.")
    hits = {h["entity"]: h for h in cli("search", "walrus")["hits"]}
    assert hits[root.id]["role"] == "user" and hits[root.id]["side"] is False
    assert hits[root.id]["created_at"] == loom.node(root.id).created_at
    assert hits[forked.id]["side"] is True and hits[forked.id]["leaf"] == newer.id != old.id
    assert hits[again.id]["side"] is True and hits[again.id]["role"] == "assistant"
    assert hits[again.id]["leaf"] == again.id
    assert hits[root.id]["leaf"] == again.id  # the latest message of the whole tree below it
    docs = cli("search", "walrus", "--kind", "document")["hits"]
    assert all("side" not in h for h in docs)


def test_a_hit_in_a_tree_over_the_shape_limit_says_role_and_date_only(
        loom: Loom, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    from loomdb.search import places

    monkeypatch.setattr(places, "MAX_SHAPE", 1)
    _, root = loom.new_tree("A narwhal census", session="big")
    loom.append("big", "Counted twelve narwhal.", role="assistant")
    hit = next(h for h in loom.search("narwhal") if h["entity"] == root.id)
    assert hit["role"] == "user" and "created_at" in hit
    assert "side" not in hit and "leaf" not in hit
