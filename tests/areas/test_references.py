"""References: link any pair, backlinks resolve at read time, dangling is reported."""

from __future__ import annotations

import pytest

from areas.cli import Cli
from loomdb import Loom


@pytest.fixture
def cli(store_url: str) -> Cli:
    return Cli(store_url)


def test_node_to_node_link_is_the_core_edge(loom: Loom, cli: Cli) -> None:
    _, a = loom.new_tree("a", session="s")
    b = loom.append("s", "b", role="assistant")
    edge = cli("link", a.id, b.id, "--type", "annotation")
    assert edge["type"] == "annotation" and edge["target"] == b.id
    assert [e.id for e in loom.edges(b.id)] == [edge["id"]]
    assert cli("backlinks", b.id)["links"] == [{"from": a.id, "to": b.id, "type": "annotation"}]
    assert cli("backlinks", a.id)["links"] == []
    assert "annotation, link" in cli.fails("link", a.id, b.id, "--type", "cites")


def test_any_pair_and_backlinks_follow_moves_and_versions(loom: Loom, cli: Cli) -> None:
    tree, node = loom.new_tree("see the spec", session="s")
    cli("doc", "new", "spec", "--text", "v1")
    first = cli("link", node.id, "doc:spec", "--type", "cites")
    assert (first["from"], first["to"], first["type"]) == (node.id, "doc:spec", "cites")
    cli("coll", "new", "reading", "--kind", "tree")
    folder = cli("coll", "add", "reading", f"tree:{tree.id}")["item"]
    item = cli("coll", "add", "reading", "doc:spec")["item"]
    cli("link", f"coll:reading/{item}", "doc:spec@main", "--type", "see-also")
    # re-versioned target: the document moves on, its references stay found
    cli("doc", "commit", "spec", "--text", "v2")
    # moved source: the item changes place, the reference still resolves to it
    cli("coll", "move", "reading", item, "--parent", folder)
    links = cli("backlinks", "doc:spec")["links"]
    assert {(x["from"], x["to"], x["type"]) for x in links} == {
        (node.id, "doc:spec", "cites"),
        (f"coll:reading/{item}", "doc:spec@main", "see-also"),
        (f"coll:reading/{item}", "doc:spec", "item"),
    }
    assert not any(x.get("dangling") for x in links)
    assert [x["type"] for x in cli("backlinks", "doc:spec@main")["links"]] == ["see-also"]
    tree_links = cli("backlinks", f"tree:{tree.id}")["links"]
    assert tree_links == [{"from": f"coll:reading/{folder}", "to": f"tree:{tree.id}",
                           "type": "item"}]


def test_same_content_in_a_conversation_and_a_document(loom: Loom, cli: Cli) -> None:
    _, node = loom.new_tree("shared paragraph", session="s")
    rev = cli("doc", "from-message", node.id, "notes")["revision"]
    expected = {"from": f"doc:notes@{rev}", "to": node.id, "type": "content"}
    assert cli("backlinks", node.id)["links"] == [expected]
    assert cli("backlinks", node.content_id)["links"] == [{**expected, "to": node.content_id}]


def test_deleted_targets_and_sources_read_as_dangling(loom: Loom, cli: Cli) -> None:
    _, node = loom.new_tree("about the draft", session="s")
    cli("doc", "new", "draft", "--text", "d")
    cli("doc", "new", "other", "--text", "o")
    cli("link", node.id, "doc:draft")
    cli("link", "doc:other", node.id, "--type", "mentions")
    cli("doc", "rm", "draft")
    cli("doc", "rm", "other")
    assert cli("backlinks", "doc:draft")["links"] == [
        {"from": node.id, "to": "doc:draft", "type": "link", "dangling": True}]
    assert cli("backlinks", node.id)["links"] == [
        {"from": "doc:other", "to": node.id, "type": "mentions", "dangling": True}]
    assert cli("backlinks", "doc:never")["links"] == []
    assert "unknown document" in cli.fails("link", node.id, "doc:draft")


def test_bad_addresses_are_typed_errors(loom: Loom, cli: Cli) -> None:
    _, node = loom.new_tree("x", session="s")
    cli("doc", "new", "d", "--text", "t")
    assert "itself" in cli.fails("link", "doc:d", "doc:d")
    assert "lowercase" in cli.fails("link", node.id, "doc:d", "--type", "Bad Type")
    assert "unknown" in cli.fails("link", node.id, "coll:none")
    assert "sha256" in cli.fails("backlinks", "sha256:12")
