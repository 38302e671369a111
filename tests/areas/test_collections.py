"""Collections: ordered, nested, tagged and tabled items that point at anything."""

from __future__ import annotations

import random

import pytest

from areas.cli import Cli
from loomdb import Loom
from loomdb.collections import COLLECTIONS
from loomdb.collections import service as K


@pytest.fixture
def cli(store_url: str) -> Cli:
    return Cli(store_url)


def _entities(loom: Loom, n: int) -> list[str]:
    _, root = loom.new_tree("item 0", session="s")
    return [root.id] + [loom.append("s", f"item {i}", role="user").id for i in range(1, n)]


def test_list_add_after_first_and_move(loom: Loom, cli: Cli) -> None:
    a, b, c = _entities(loom, 3)
    cli("coll", "new", "todo", "--kind", "list")
    ia = cli("coll", "add", "todo", a)["item"]
    ic = cli("coll", "add", "todo", c)["item"]
    ib = cli("coll", "add", "todo", b, "--after", ia)["item"]
    order = [r["id"] for r in cli("coll", "show", "todo")["items"]]
    assert order == [ia, ib, ic]
    cli("coll", "move", "todo", ic, "--first")
    cli("coll", "move", "todo", ia, "--after", ib)
    assert [r["id"] for r in cli("coll", "show", "todo")["items"]] == [ic, ib, ia]
    assert [r["entity"] for r in cli("coll", "show", "todo")["items"]] == [c, b, a]
    assert "only a tree nests" in cli.fails("coll", "add", "todo", a, "--parent", ia)


def test_ordering_survives_many_moves_rewriting_one_row(loom: Loom) -> None:
    ids = _entities(loom, 6)
    K.new(loom, "l")
    items = [K.add(loom, "l", e).id for e in ids]
    expected = list(items)
    rng = random.Random(7)
    for _ in range(150):
        moving = rng.choice(expected)
        expected.remove(moving)
        if rng.random() < 0.2:
            K.move(loom, "l", moving, first=True)
            expected.insert(0, moving)
        else:
            anchor = rng.choice(expected)
            K.move(loom, "l", moving, after=anchor)
            expected.insert(expected.index(anchor) + 1, moving)
        _, shown = K.ordered(loom, "l")
        assert [i.id for i in shown] == expected
    with loom.unit(COLLECTIONS) as db:
        longest = db.one("SELECT max(length(ord)) FROM coll_items")
    assert longest is not None and longest[0] < 40


def test_tree_nesting_depth_first_and_cycles_refused(loom: Loom, cli: Cli) -> None:
    a, b, c, d = _entities(loom, 4)
    cli("coll", "new", "outline", "--kind", "tree")
    top = cli("coll", "add", "outline", a)["item"]
    child = cli("coll", "add", "outline", b, "--parent", top)["item"]
    grandchild = cli("coll", "add", "outline", c, "--parent", child)["item"]
    second = cli("coll", "add", "outline", d)["item"]
    rows = cli("coll", "show", "outline")["items"]
    assert [(r["id"], r["depth"], r["parent"]) for r in rows] == [
        (top, 0, None), (child, 1, top), (grandchild, 2, child), (second, 0, None)]
    assert "under itself" in cli.fails("coll", "move", "outline", top, "--parent", grandchild)
    cli("coll", "move", "outline", grandchild, "--parent", second)
    rows = cli("coll", "show", "outline")["items"]
    assert [r["id"] for r in rows] == [top, child, second, grandchild]
    assert cli("coll", "rm", "outline", top)["removed"] == [top, child]
    assert [r["id"] for r in cli("coll", "show", "outline")["items"]] == [second, grandchild]


def test_tags_fields_filters_and_group_by(loom: Loom, cli: Cli) -> None:
    a, b, c = _entities(loom, 3)
    cli("coll", "new", "board", "--kind", "table")
    ia = cli("coll", "add", "board", a, "--field", "status=todo", "--tag", "ml")["item"]
    ib = cli("coll", "add", "board", b, "--field", "status=done")["item"]
    ic = cli("coll", "add", "board", c)["item"]
    cli("coll", "tag", "board", ib, "ml", "rl")
    cli("coll", "set", "board", ic, "status=todo", "owner=ann")
    assert [r["id"] for r in cli("coll", "show", "board", "--tag", "ml")["items"]] == [ia, ib]
    assert [r["id"] for r in cli("coll", "show", "board", "--where", "status=todo")["items"]] == [
        ia, ic]
    groups = cli("coll", "show", "board", "--group-by", "status")["groups"]
    assert {k: [r["id"] for r in v] for k, v in groups.items()} == {"todo": [ia, ic],
                                                                       "done": [ib]}
    assert cli("coll", "set", "board", ic, "owner=")["fields"] == {"status": "todo"}
    assert cli("coll", "tag", "board", ib, "rl", "--remove")["tags"] == ["ml"]
    assert "K=V" in cli.fails("coll", "set", "board", ic, "oops")


def test_items_point_at_any_address(loom: Loom, cli: Cli) -> None:
    tree, node = loom.new_tree("hello", session="s")
    blob = loom.put_blob(b"bytes", "application/octet-stream")
    cli("doc", "new", "spec", "--text", "spec text")
    cli("coll", "new", "inner")
    inner = cli("coll", "add", "inner", node.id)["item"]
    cli("coll", "new", "all", "--kind", "tree")
    for entity in (node.id, f"tree:{tree.id}", "doc:spec", "doc:spec@main", "coll:inner",
                   f"coll:inner/{inner}", blob, node.content_id):
        cli("coll", "add", "all", entity)
    shown = [r["entity"] for r in cli("coll", "show", "all")["items"]]
    assert shown == [node.id, f"tree:{tree.id}", "doc:spec", "doc:spec@main", "coll:inner",
                     f"coll:inner/{inner}", blob, node.content_id]
    assert "unknown" in cli.fails("coll", "add", "all", "doc:missing")
    assert "sha256" in cli.fails("coll", "add", "all", "sha256:xyz")
    assert "kind" in cli.fails("coll", "new", "bad", "--kind", "heap")


def test_show_names_items_by_title_not_by_raw_id(loom: Loom, cli: Cli) -> None:
    from test_bad_input import run_cli

    _, first = loom.new_tree("Where do herons nest?", session="s", title="Herons")
    long = loom.append("s", "In colonies called heronries, high in trees near water, "
                            "often with other wading birds nearby.", role="assistant")
    cli("doc", "new", "field-notes", "--text", "seen at dawn")
    cli("coll", "new", "reading")
    items = [cli("coll", "add", "reading", e)["item"]
             for e in (first.id, long.id, "doc:field-notes", f"tree:{first.tree}")]
    rows = cli("coll", "show", "reading")["items"]
    assert [r["title"] for r in rows] == [
        "Where do herons nest?",
        "In colonies called heronries, high in trees near water,…",
        "field-notes", "Herons"]
    code, out, err = run_cli(cli.db, "coll", "show", "reading")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"{items[0]}\tWhere do herons nest?\t{first.id}"
    assert lines[2] == f"{items[2]}\tfield-notes"
    assert lines[3] == f"{items[3]}\tHerons\ttree:{first.tree}"
