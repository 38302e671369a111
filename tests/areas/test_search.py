"""Full-text search: one results contract on SQLite FTS5 and PostgreSQL tsvector."""

from __future__ import annotations

from pathlib import Path

import pytest

from areas.cli import Cli
from loomdb import Loom

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
        assert set(h) <= {"entity", "kind", "tree", "snippet", "score"}
        assert "[" in h["snippet"] and isinstance(h["score"], float)
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


def test_a_lost_trigger_is_recreated_and_the_gap_indexed(loom: Loom, cli: Cli) -> None:
    """A core migration that rebuilds the nodes table drops its triggers: the next
    search puts the trigger back and indexes what was written meanwhile."""
    from loomdb.search import SEARCH

    loom.new_tree("before the rebuild", session="s")
    assert cli("search", "rebuild")["hits"]
    with loom.unit(SEARCH) as db:
        db.execute("DROP TRIGGER search_node_written" +
                   (" ON nodes" if db.dialect == "postgres" else ""))
    loom.append("s", "written while the trigger was gone", role="user")
    assert [h["snippet"] for h in cli("search", "gone")["hits"]] == [
        "written while the trigger was [gone]"]
    loom.append("s", "and after it came back", role="user")
    assert cli("search", "came back")["hits"]


def test_text_with_a_nul_character_is_indexed(loom: Loom, cli: Cli) -> None:
    loom.new_tree("root", session="s")  # (a NUL in a tree's title is the core's matter)
    loom.append("s", "alpha\x00omega", role="user")
    cli("doc", "new", "nul", "--text", "gamma\x00delta")
    assert cli("search", "omega")["hits"] and cli("search", "delta")["hits"]
