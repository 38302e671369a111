"""The Trees view: the caller's trees grouped by lineage (a subagent's tree under the
tree it was spawned from, imports marked, each session's fork point as a breadcrumb),
each tree linking to its thread and its tree map; and its one request,
`GET /api/lineage`, on both backends."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from loomdb import Loom


@dataclass
class Family:
    tree: str
    title: str
    fork_at: str  # message 2 of the parent, where `alt` was forked and the child spawned
    child: str
    child_title: str
    imported: str


def grow_family(lm: Loom, name: str) -> Family:
    title = f"Garden {name}"
    tree, root = lm.new_tree("Plan a garden", session=name, title=title)
    second = lm.append(name, "Tomatoes and beans.", role="assistant")
    lm.append(name, "And flowers?", role="user")
    lm.fork(second.id, f"{name}-alt")
    lm.append(f"{name}-alt", "What about herbs?", role="user")
    child_title = f"subagent: soil {name}"
    child, _ = lm.new_tree("Test the soil", title=child_title, session=f"{name}-kid",
                           lineage={"spawned": {"tree": tree.id, "node": second.id,
                                                "session": name}})
    other, _ = lm.new_tree("An old chat", title=f"Imported {name}",
                           lineage={"imported": {"format": "chatgpt", "conversation": "c1"}})
    return Family(tree.id, title, second.id, child.id, child_title, other.id)


@pytest.fixture(scope="module")
def family(served: tuple[Loom, str]) -> Family:
    return grow_family(served[0], "fam")


def test_lineage_names_parents_imports_and_fork_points(served: Any, family: Family) -> None:
    _, base = served
    trees = {t["id"]: t for t in httpx.get(f"{base}/api/lineage").json()["trees"]}
    parent, child, imported = trees[family.tree], trees[family.child], trees[family.imported]
    assert parent["parent"] is None and parent["imported"] is None
    assert [r["name"] for r in parent["refs"]] == ["fam", "fam-alt"]
    assert parent["refs"][0]["forked_from"] is None
    assert parent["refs"][1]["forked_from"] == {"ref": None, "node": family.fork_at, "message": 2}
    assert parent["head"] in ("fam", "fam-alt")
    assert child["parent"] == {"kind": "spawned", "tree": family.tree, "title": family.title,
                               "node": family.fork_at, "session": "fam", "message": 2}
    assert imported["imported"] == {"format": "chatgpt", "conversation": "c1"}
    assert imported["head"] == imported["root"]


def test_trees_are_grouped_by_lineage_with_breadcrumbs(page: Any, family: Family) -> None:
    from playwright.sync_api import expect

    page.goto("/#/trees")
    forest = page.get_by_role("list", name="Trees by lineage")
    parent = forest.locator(f'li[data-tree="{family.tree}"]')
    expect(parent.get_by_role("link", name=family.title, exact=True).first).to_have_attribute(
        "href", re.compile("#/thread/fam"))
    sessions = parent.get_by_role("list", name=f"Sessions of {family.title}")
    expect(sessions.get_by_role("listitem").nth(1)).to_contain_text(
        "fam-alt forked at message 2")
    # the spawned child sits under its parent, with a breadcrumb back
    spawned = parent.get_by_role("list", name=f"Spawned from {family.title}")
    child = spawned.locator(f'li[data-tree="{family.child}"]')
    crumbs = child.get_by_role("navigation", name=f"Lineage of {family.child_title}")
    expect(crumbs).to_contain_text(f"spawned from {family.title} at message 2")
    imported = forest.locator(f'li[data-tree="{family.imported}"]')
    expect(imported).to_contain_text("imported from chatgpt")
    page.screenshot(path="/tmp/trees.png", full_page=True)
    # each tree opens its thread and its map
    parent.get_by_role("link", name=f"Tree map of {family.title}").click()
    expect(page).to_have_url(re.compile(f"#/treemap/{family.tree}$"))
    page.go_back()
    sessions.get_by_role("link", name="fam-alt").click()
    expect(page).to_have_url(re.compile("#/thread/fam-alt$"))
    expect(page.get_by_role("list", name="Messages").get_by_role("article")).to_have_count(3)
    page.go_back()
    crumbs.get_by_role("link", name=family.title).click()
    expect(page.locator(f'article[data-node="{family.fork_at}"]')).to_have_class(
        re.compile(r"\bhighlighted\b"))


def test_a_new_conversation_starts_from_the_trees_view(page: Any, name: str) -> None:
    from playwright.sync_api import expect

    page.goto("/#/trees")
    form = page.get_by_role("form", name="New conversation")
    form.get_by_role("textbox", name="First message").fill("Which bulbs flower in March?")
    form.get_by_role("textbox", name="Session name").fill(name)
    form.get_by_role("button", name="Start").click()
    expect(page).to_have_url(re.compile(f"#/thread/{name}$"))
    expect(page.get_by_role("list", name="Messages").get_by_role("article")).to_have_text(
        re.compile("Which bulbs flower in March?"))
