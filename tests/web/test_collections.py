"""Collections (`#/collections`, `#/collections/<name>?view=...`): the list and a new
collection; items added, dragged (real pointer events) to reorder and to nest, with
buttons and menus doing the same; the tagged, table and kanban views, a card dragged to
another column; each change read back from the store."""

from __future__ import annotations

import re
from typing import Any

from loomdb import Loom


def tasks(lm: Loom, name: str, kind: str, words: list[str]) -> list[str]:
    """A collection of `kind` whose items are messages titled by `words`; their ids."""
    _, root = lm.new_tree(f"Tasks for {name}", session=f"t-{name}")
    lm.collections.new(name, kind)
    ids = []
    for w in words:
        node = lm.append(f"t-{name}", f"{w} task", role="user")
        ids.append(lm.collections.add(name, node.id).id)
    return ids


def order(lm: Loom, name: str) -> list[tuple[str, int]]:
    return [(it["title"], it["depth"]) for it in lm.collections.show(name)["items"]]


def test_make_a_collection_add_items_drag_and_buttons_reorder(
        page: Any, served: tuple[Loom, str], name: str) -> None:
    from playwright.sync_api import expect

    lm = served[0]
    _, root = lm.new_tree("Reading list", session=f"r-{name}")
    nodes = [lm.append(f"r-{name}", f"{w} task", role="user").id for w in ("Alpha", "Beta", "Gamma")]
    page.goto("/")
    page.get_by_role("navigation", name="Views").get_by_role("link", name="Collections").click()
    new = page.get_by_role("form", name="New collection")
    new.get_by_label("Name").fill(name)
    new.get_by_role("button", name="Create collection").click()
    expect(page).to_have_url(re.compile(rf"#/collections/{name}$"))
    add = page.get_by_role("form", name="Add item")
    expect(add).to_contain_text("from its More menu")  # messages come from the thread
    for node in nodes:
        lm.collections.add(name, node)
    add.get_by_label("Item").select_option(label="Reading list")  # a whole conversation
    add.get_by_role("button", name="Add item").click()
    items = page.get_by_role("list", name="Items").get_by_role("listitem")
    expect(items).to_have_count(4)
    page.get_by_role("button", name="Edit Reading list").click()
    page.get_by_role("button", name="Remove item").click()
    expect(items).to_have_count(3)
    expect(items).to_have_text([re.compile(w) for w in ("Alpha", "Beta", "Gamma")])
    # drag Gamma onto Alpha: right after it
    items.filter(has_text="Gamma").drag_to(items.filter(has_text="Alpha"))
    expect(items).to_have_text([re.compile(w) for w in ("Alpha", "Gamma", "Beta")])
    assert [t for t, _ in order(lm, name)] == ["Alpha task", "Gamma task", "Beta task"]
    # the buttons: Beta up, then Alpha down
    page.get_by_role("button", name="Move up Beta task").click()
    expect(items).to_have_text([re.compile(w) for w in ("Alpha", "Beta", "Gamma")])
    page.get_by_role("button", name="Move down Alpha task").click()
    expect(items).to_have_text([re.compile(w) for w in ("Beta", "Alpha", "Gamma")])
    expect(page.get_by_role("button", name="Move up Beta task")).to_be_disabled()
    assert [t for t, _ in order(lm, name)] == ["Beta task", "Alpha task", "Gamma task"]
    # an item's link opens the message's branch
    expect(items.filter(has_text="Alpha").get_by_role("link", name="Alpha task")).to_have_attribute(
        "href", f"#/thread/{nodes[0]}?at={nodes[0]}")
    page.screenshot(path="/tmp/areasweb-list.png", full_page=True)


def test_a_tree_nests_by_drag_and_by_menu(page: Any, served: tuple[Loom, str], name: str) -> None:
    from playwright.sync_api import expect

    lm = served[0]
    tasks(lm, name, "tree", ["Alpha", "Beta", "Gamma"])
    page.goto(f"/#/collections/{name}")
    tree = page.get_by_role("list", name="Item tree")
    items = tree.get_by_role("listitem")
    expect(items).to_have_count(3)
    # drag Gamma onto Alpha's nest target: under Alpha
    tree.get_by_role("listitem", name="Gamma task").drag_to(page.get_by_role("group", name="Nest under Alpha task"))
    expect(tree.get_by_role("listitem", name="Gamma task")).to_have_attribute("aria-level", "2")
    assert order(lm, name) == [("Alpha task", 0), ("Gamma task", 1), ("Beta task", 0)]
    # the menu: Beta under Gamma, then Gamma back to the top level (Beta comes with it)
    page.get_by_label("Move Beta task under").select_option(label="Gamma task")
    expect(tree.get_by_role("listitem", name="Beta task")).to_have_attribute("aria-level", "3")
    page.get_by_label("Move Gamma task under").select_option(label="(top level)")
    expect(tree.get_by_role("listitem", name="Gamma task")).to_have_attribute("aria-level", "1")
    expect(tree.get_by_role("listitem", name="Beta task")).to_have_attribute("aria-level", "2")
    assert order(lm, name) == [("Alpha task", 0), ("Gamma task", 0), ("Beta task", 1)]
    # an item cannot be put under itself: the menu does not offer it
    expect(page.get_by_label("Move Gamma task under").locator("option")).to_have_text(
        ["(top level)", "Alpha task"])
    page.screenshot(path="/tmp/areasweb-tree.png", full_page=True)


def test_tagged_table_and_kanban(page: Any, served: tuple[Loom, str], name: str) -> None:
    from playwright.sync_api import expect

    lm = served[0]
    a, b, c = tasks(lm, name, "table", ["Alpha", "Beta", "Gamma"])
    lm.collections.tag(name, a, ["later"])
    lm.collections.set_fields(name, a, {"status": "todo"})
    lm.collections.set_fields(name, b, {"status": "doing"})
    # tagged: a section per tag; drag an untagged item onto `later`
    page.goto(f"/#/collections/{name}?view=tagged")
    later = page.get_by_role("region", name="Tag later")
    expect(later.get_by_role("listitem")).to_have_count(1)
    page.get_by_role("region", name="Untagged").get_by_role("listitem").filter(
        has_text="Gamma").drag_to(later)
    expect(later.get_by_role("listitem")).to_have_count(2)
    page.get_by_role("button", name="Tag Beta task later").click()
    expect(later.get_by_role("listitem")).to_have_count(3)
    expect(page.get_by_role("region", name="Untagged")).to_have_count(0)
    # table (the collection's own kind): a field edited in its cell
    page.get_by_role("navigation", name="Collection views").get_by_role("link", name="Table").click()
    table = page.get_by_role("table", name="Item table")
    expect(table.get_by_role("columnheader", name="status")).to_be_visible()
    cell = table.get_by_role("textbox", name="status of Gamma task")
    cell.fill("todo")
    cell.press("Enter")
    expect(cell).to_have_value("todo")
    # kanban by status: Gamma now sits in `todo`; drag Alpha to `doing`
    page.get_by_role("navigation", name="Collection views").get_by_role("link", name="Kanban").click()
    expect(page.get_by_label("Group by")).to_have_value("status")
    todo, doing = (page.get_by_role("region", name=f"Column {v}") for v in ("todo", "doing"))
    expect(todo.get_by_role("listitem")).to_have_count(2)
    todo.get_by_role("listitem").filter(has_text="Alpha").drag_to(doing)
    expect(doing.get_by_role("listitem")).to_have_count(2)
    expect(todo.get_by_role("listitem")).to_have_count(1)
    # the button alternative, and a new column
    page.get_by_role("form", name="Add column").get_by_label("New column").fill("done")
    page.get_by_role("button", name="Add column").click()
    done = page.get_by_role("region", name="Column done")
    doing.get_by_role("listitem").filter(has_text="Beta").get_by_role(
        "button", name="Move to done").click()
    expect(done.get_by_role("listitem")).to_have_text([re.compile("Beta")])
    fields = {it["title"]: it["fields"].get("status")
              for it in lm.collections.show(name)["items"]}
    assert fields == {"Alpha task": "doing", "Beta task": "done", "Gamma task": "todo"}
    page.screenshot(path="/tmp/areasweb-kanban.png", full_page=True)


def test_an_item_is_edited_and_removed_and_a_search_link_marks_it(
        page: Any, served: tuple[Loom, str], name: str) -> None:
    from playwright.sync_api import expect

    lm = served[0]
    a, b = tasks(lm, name, "list", ["Alpha", "Beta"])
    page.goto(f"/#/collections/{name}?item={b}")  # as a search hit links to it
    editor = page.get_by_role("complementary", name="Item Beta task")
    expect(editor).to_be_visible()
    editor.get_by_label("Tag").fill("urgent")
    editor.get_by_role("button", name="Add tag").click()
    expect(editor.get_by_role("button", name="Remove tag urgent")).to_be_visible()
    editor.get_by_label("Field").fill("owner")
    editor.get_by_label("Value").fill("ana")
    editor.get_by_role("button", name="Set field").click()
    expect(editor.get_by_role("definition")).to_contain_text("ana")
    items = page.get_by_role("list", name="Items").get_by_role("listitem")
    expect(items.filter(has_text="Beta")).to_contain_text("urgent")
    editor.get_by_role("button", name="Remove item").click()
    expect(items).to_have_count(1)
    expect(editor).to_have_count(0)
    assert [it["id"] for it in lm.collections.show(name)["items"]] == [a]
    # a refusal is one line, nothing written
    page.goto(f"/#/collections/{name}?item={a}")
    editor = page.get_by_role("complementary", name="Item Alpha task")
    editor.get_by_label("Field").fill("a=b")
    editor.get_by_label("Value").fill("c")
    editor.get_by_role("button", name="Set field").click()
    expect(page.get_by_role("alert")).to_contain_text("field names are 1-100 characters")
    assert lm.collections.show(name)["items"][0]["fields"] == {}
