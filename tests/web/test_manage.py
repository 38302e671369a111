"""Managing the store from the page (both backends, at 1280x900 and 390x844), with no
form asking for an id: a tree renamed, archived and back, exported in every format (a
download), deleted after saying how many messages (to the trash, which restores it or
purges it for good after a confirmation); a message bookmarked, tagged,
excluded, saved as a document, added to a collection, its branch pruned and deleted
(each confirmed, saying how many messages), redacted; another tool's export imported
by dropping its file, with the report shown."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from loomdb import Loom
from loomdb.errors import NotFound

SHOTS = Path("/tmp/shots/web-verbs")
FIXTURE = (Path(__file__).resolve().parents[1] / "fixtures" / "interop"
           / "openwebui_export_openwebui-importer_webui-json.json")


def messages(page: Any) -> Any:
    return page.get_by_role("list", name="Messages").get_by_role("article")


def opened(page: Any, headish: str, count: int) -> None:
    from playwright.sync_api import expect

    page.goto(f"/#/thread/{headish}")
    expect(page.get_by_role("region", name="Thread")).to_have_attribute("data-ready", str(count))


def listed(base: str, tree: str) -> tuple[bool, bool]:
    """(whether the tree is in Trees, whether it is in the trash), as the API says."""
    trees = httpx.get(f"{base}/api/trees").json()["trees"]
    trash = httpx.get(f"{base}/api/trash").json()
    return tree in [t["id"] for t in trees], tree in [t["id"] for t in trash]


def talk(lm: Loom, name: str) -> list[str]:
    _, q = lm.new_tree("Plan a garden", session=name, title=f"Garden {name}")
    ids = [q.id]
    for role, text in (("assistant", "Tomatoes and basil."), ("user", "And flowers?"),
                       ("assistant", "Marigolds keep pests away."), ("user", "Thanks")):
        ids.append(lm.append(name, text, role=role).id)
    return ids


def test_a_tree_is_renamed_archived_exported_and_deleted(
        sized_page: Any, served: Any, name: str, axe: Any) -> None:
    from playwright.sync_api import expect

    page, lm = sized_page, served[0]
    ids = talk(lm, name)
    tree = lm.node(ids[0]).tree
    page.goto("/#/trees")
    row = page.locator(f'li.tree[data-tree="{tree}"]')
    row.get_by_role("button", name=f"Manage Garden {name}").click()
    actions = row.get_by_role("group", name=f"Manage Garden {name}")
    actions.get_by_role("button", name="Rename…").click()
    form = row.get_by_role("form", name="Rename tree")
    form.get_by_label("Title").fill(f"Kitchen garden {name}")
    form.get_by_role("button", name="Save title").click()
    expect(row.get_by_role("link", name=f"Kitchen garden {name}", exact=True)).to_be_visible()
    assert lm.tree(tree).title == f"Kitchen garden {name}"
    axe(page)
    # every export format, downloaded under the tree's name
    row.get_by_role("button", name=f"Manage Kitchen garden {name}").click()
    row.get_by_role("button", name=f"Manage Kitchen garden {name}").click()
    actions = row.get_by_role("group", name=f"Manage Kitchen garden {name}")
    actions.get_by_role("button", name="Export…").click()
    export = row.get_by_role("form", name="Export tree")
    for fmt, suffix in (("json", ".json"), ("jsonl", ".jsonl"), ("markdown", ".md"),
                        ("openai-jsonl", ".openai.jsonl"), ("chatgpt", ".json")):
        export.get_by_label("Format").select_option(fmt)
        with page.expect_download() as got:
            export.get_by_role("button", name="Download").click()
        download = got.value
        assert download.suggested_filename == f"Kitchen-garden-{name}{suffix}"
        body = Path(download.path()).read_text(encoding="utf-8")
        assert "Marigolds" in body, (fmt, body[:200])
        if fmt in ("json", "chatgpt"):
            json.loads(body)
    # archived: gone from the list, under Archived, and back
    actions.get_by_role("button", name="Archive").click()
    expect(page.locator(f'li.tree[data-tree="{tree}"]')).to_have_count(0)
    page.get_by_label("Archived").check()
    archived = page.get_by_role("list", name="Archived trees")
    expect(archived.get_by_role("link", name=f"Kitchen garden {name}", exact=True)).to_be_visible()
    row = archived.locator(f'li.tree[data-tree="{tree}"]')
    row.get_by_role("button", name=f"Manage Kitchen garden {name}").click()
    row.get_by_role("button", name="Unarchive").click()
    expect(archived.locator(f'li.tree[data-tree="{tree}"]')).to_have_count(0)
    page.get_by_label("Archived").uncheck()
    row = page.locator(f'li.tree[data-tree="{tree}"]')
    expect(row).to_be_visible()
    # deleted, after saying how many messages and which session
    row.get_by_role("button", name=f"Manage Kitchen garden {name}").click()
    row.get_by_role("button", name="Delete…").click()
    confirm = row.get_by_role("alertdialog", name="Delete tree")
    expect(confirm).to_contain_text(f"5 messages and the session {name}")
    confirm.get_by_role("button", name="Move 5 messages to the trash").click()
    expect(page.locator(f'li.tree[data-tree="{tree}"]')).to_have_count(0)
    assert listed(served[1], tree) == (False, True)  # in the trash, not in Trees


def test_the_trash_restores_and_purges_a_deleted_tree(sized_page: Any, served: Any, name: str,
                                                      axe: Any) -> None:
    from playwright.sync_api import expect

    page, lm = sized_page, served[0]
    tree = lm.node(talk(lm, name)[0]).tree
    page.goto(f"/#/thread/{name}")
    page.get_by_role("group", name=f"Manage Garden {name}").get_by_role(
        "button", name="Delete…").click()
    page.get_by_role("alertdialog", name="Delete tree").get_by_role(
        "button", name="Move 5 messages to the trash").click()
    expect(page).to_have_url(re.compile(r"#/trees$"))
    page.get_by_role("link", name="Trash").click()
    trash = page.get_by_role("list", name="Trees in the trash")
    row = trash.locator(f'li[data-tree="{tree}"]')
    expect(row).to_contain_text(f"Garden {name}")
    expect(row).to_contain_text("5 messages")
    expect(row).to_contain_text("purged after")
    axe(page)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"trash-{page.viewport_size['width']}.png"), full_page=True)
    # restored: back in Trees
    row.get_by_role("button", name="Restore").click()
    expect(page.get_by_role("status").filter(has_text=f'Restored "Garden {name}".')).to_be_visible()
    expect(row).to_have_count(0)
    assert listed(served[1], tree) == (True, False)
    page.goto("/#/trees")
    expect(page.locator(f'li.tree[data-tree="{tree}"]')).to_be_visible()
    # deleted again, then purged for good after a confirmation
    httpx.delete(f"{served[1]}/api/trees/{tree}").raise_for_status()
    page.goto("/#/trash")
    row.get_by_role("button", name="Purge now…").click()
    confirm = row.get_by_role("alertdialog", name=f"Purge Garden {name}")
    expect(confirm).to_contain_text("5 messages for good")
    confirm.get_by_role("button", name="Cancel").click()
    expect(confirm).to_have_count(0)
    row.get_by_role("button", name="Purge now…").click()
    confirm.get_by_role("button", name="Purge 5 messages").click()
    expect(page.get_by_role("status").filter(has_text="Purged")).to_be_visible()
    expect(row).to_have_count(0)
    assert listed(served[1], tree) == (False, False)
    with pytest.raises(NotFound):
        lm.tree(tree)


def test_a_message_is_marked_saved_collected_pruned_redacted_and_deleted(
        sized_page: Any, served: Any, name: str, axe: Any) -> None:
    from playwright.sync_api import expect

    page, lm = sized_page, served[0]
    ids = talk(lm, name)
    lm.collections.new(f"{name}-picks", kind="list")
    opened(page, name, 5)

    def more(k: int, action: str) -> Any:
        card = messages(page).nth(k)
        card.get_by_role("button", name="More").click()
        card.get_by_role("button", name=action).click()
        return card

    card = more(1, "Bookmark…")
    card.get_by_role("form", name="Bookmark").get_by_label("Bookmark label").fill(f"{name}-bm")
    card.get_by_role("button", name="Bookmark", exact=True).click()
    expect(messages(page).nth(1)).to_contain_text(f"Bookmark: {name}-bm")
    card = more(1, "Tags…")
    card.get_by_label("Tags (comma-separated)").fill("herbs, summer")
    card.get_by_role("button", name="Save tags").click()
    expect(messages(page).nth(1)).to_contain_text("#herbs")
    assert sorted(lm.meta(ids[1]).tags) == ["herbs", "summer"]
    more(1, "Exclude from the context")
    expect(messages(page).nth(1)).to_contain_text("excluded from the context")
    assert lm.meta(ids[1]).excluded
    card = more(3, "Save as document…")
    card.get_by_label("Document name").fill(f"{name}-doc")
    card.get_by_role("button", name="Save document").click()
    expect(card.get_by_role("status")).to_contain_text(f"Saved as document {name}-doc")
    assert "Marigolds" in httpx.get(f"{served[1]}/api/documents/{name}-doc").json()["text"]
    card = more(3, "Add to collection…")
    card.get_by_role("combobox", name="Collection").select_option(f"{name}-picks")
    card.get_by_role("button", name="Add", exact=True).click()
    expect(card.get_by_role("status")).to_contain_text(f"Added to {name}-picks")
    got = httpx.get(f"{served[1]}/api/collections/{name}-picks").json()
    assert [i["entity"] for i in got["items"]] == [ids[3]]
    axe(page)
    # prune the branch from message 3: confirmed with its size
    card = more(2, "Prune branch…")
    confirm = card.get_by_role("alertdialog", name="Prune branch")
    expect(confirm).to_contain_text("3 messages from here on")
    confirm.get_by_role("button", name="Prune 3 messages").click()
    expect(messages(page).nth(2)).to_contain_text("pruned")
    assert lm.meta(ids[2]).pruned
    more(2, "Unprune branch")
    expect(messages(page).nth(2)).not_to_contain_text("pruned")
    # redact: the text erased, the message kept
    card = more(4, "Redact…")
    card.get_by_role("alertdialog", name="Redact message").get_by_role(
        "button", name="Redact").click()
    expect(messages(page).nth(4)).to_contain_text("[redacted]")
    # delete the branch from message 4: it says how many messages and the session
    card = more(3, "Delete branch…")
    confirm = card.get_by_role("alertdialog", name="Delete branch")
    expect(confirm).to_contain_text("Delete 2 messages")
    expect(confirm).to_contain_text(f"The session {name} goes too.")
    confirm.get_by_role("button", name="Cancel").click()
    expect(messages(page)).to_have_count(5)
    card = more(3, "Delete branch…")
    card.get_by_role("alertdialog", name="Delete branch").get_by_role(
        "button", name="Delete 2 messages").click()
    expect(messages(page)).to_have_count(3)
    assert [e["action"] for e in lm.forget.log(limit=5)][:2] == ["delete", "redact"]


def test_an_export_dropped_on_trees_is_imported_and_reported(
        sized_page: Any, served: Any, axe: Any, shot: Any) -> None:
    from playwright.sync_api import expect

    page = sized_page
    page.goto("/#/trees")
    expect(page.get_by_role("heading", level=1, name="Trees")).to_be_visible()
    axe(page)
    shot(page, "trees")
    data = base64.b64encode(FIXTURE.read_bytes()).decode()
    page.evaluate("""([name, b64]) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([bytes], name, { type: "application/json" }));
      const zone = document.querySelector('[aria-label="Import"]');
      for (const type of ["dragenter", "dragover", "drop"])
        zone.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    }""", [FIXTURE.name, data])
    report = page.get_by_test_id("import-report")
    expect(report).to_contain_text(f"{FIXTURE.name}: imported")
    expect(report).to_contain_text("messages")
    expect(page.get_by_role("list", name="Trees by lineage")).to_contain_text(
        "imported from openwebui")
    # a file that is not an export: refused in words, beside the drop zone
    page.get_by_label("choose a file").set_input_files(
        files=[{"name": "notes.json", "mimeType": "application/json", "buffer": b"[1, 2"}])
    expect(page.get_by_role("region", name="Import").get_by_role("alert")).to_contain_text(
        "notes.json:")
