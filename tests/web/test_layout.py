"""Every view, at 1280x900 and 390x844 (both backends): no page wider than the screen,
axe-core finds no serious or critical violation (WCAG 2 A/AA contrast included), each
has its own title, the favicon is served, the navigation folds behind Menu on a phone,
switchers are readable and dates are shown. A screenshot of each view at each size is
kept in test-artifacts/web/views/ to be looked at."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from loomdb import Loom


@dataclass
class World:
    session: str
    tree: str
    buffer: str
    document: str
    collection: str
    share: str


@pytest.fixture(scope="module")
def world(served: tuple[Loom, str]) -> World:
    """Something in every view: a conversation with versions and alternatives, a buffer
    document, a document, a collection holding the answer, a share link."""
    lm, base = served
    tree, q = lm.new_tree("Plan a small garden for a balcony", session="garden",
                          title="Balcony garden")
    a = lm.append("garden", "Herbs in pots: **basil**, thyme and mint.", role="assistant")
    lm.append(q.id, "Tomatoes on a trellis.", role="assistant")
    lm.edit(q.id, "Plan a small garden for a sunny balcony")
    lm.append("garden", "Which pots drain best?", role="user")
    lm.new_tree("Once upon a time", session="tale", mode="buffer", title="tale")
    lm.documents.new("planting-notes", "Basil likes sun.\n")
    lm.collections.new("favourites", kind="list")
    lm.collections.add("favourites", a.id)
    with httpx.Client(base_url=base) as c:
        share = c.post("/api/shares", json={"headish": "garden", "live": True}).json()
    return World("garden", tree.id, "tale", "planting-notes", "favourites", share["path"])


def views(w: World) -> list[tuple[str, str, str]]:
    """(name, address, what the title says)."""
    return [
        ("trees", "/#/trees", "Trees"),
        ("thread", f"/#/thread/{w.session}", "Balcony garden"),
        ("search", "/#/search?q=basil", "Search"),
        ("documents", "/#/documents", "Documents"),
        ("document", f"/#/documents/{w.document}", "Documents"),
        ("collections", "/#/collections", "Collections"),
        ("collection", f"/#/collections/{w.collection}", "Collections"),
        ("inbox", "/#/inbox", "Inbox"),
        ("treemaps", "/#/treemap", "Tree map"),
        ("treemap", f"/#/treemap/{w.tree}", "Tree map"),
        ("looms", "/#/loom", "Loom"),
        ("loom", f"/#/loom/{w.buffer}", "Loom"),
        ("share", "/#/share", "Share"),
        ("shared-link", w.share, "Balcony garden"),
    ]


def test_every_view_fits_reads_and_passes_axe(sized_page: Any, world: World, served: Any,
                                               axe: Any, shot: Any) -> None:
    from playwright.sync_api import expect

    page = sized_page
    width = page.viewport_size["width"]
    for name, address, title in views(world):
        page.goto(address)
        expect(page.get_by_role("heading", level=1).first).to_be_visible()
        # what the view reads has come (a live stream stays open: no "network idle")
        expect(page.get_by_text(re.compile(r"^(Loading|Reading|Opening)[^…]*…$"))).to_have_count(0)
        expect(page).to_have_title(f"{title} · loomdb")
        wide = page.evaluate("() => document.documentElement.scrollWidth")
        assert wide <= width, f"{name}: {wide}px wide at {width}px"
        axe(page)
        shot(page, name)
    icon = page.evaluate("() => document.querySelector('link[rel=icon]').href")
    answer = httpx.get(icon)
    assert answer.status_code == 200 and answer.text.startswith("<svg")


def test_the_navigation_folds_on_a_phone(sized_page: Any, world: World) -> None:
    from playwright.sync_api import expect

    page = sized_page
    phone = page.viewport_size["width"] < 500
    page.goto("/#/trees")
    nav = page.get_by_role("navigation", name="Views")
    menu = page.get_by_role("button", name="Menu")
    if not phone:
        expect(menu).to_be_hidden()
        expect(nav.get_by_role("link", name="Search")).to_be_visible()
        return
    expect(nav.get_by_role("link", name="Search")).to_be_hidden()
    expect(menu).to_have_attribute("aria-expanded", "false")
    menu.click()
    expect(menu).to_have_attribute("aria-expanded", "true")
    nav.get_by_role("link", name="Documents").click()
    expect(page.get_by_role("heading", level=1, name="Documents")).to_be_visible()
    expect(nav.get_by_role("link", name="Search")).to_be_hidden()  # closed behind it


def test_switchers_and_dates_are_readable(sized_page: Any, world: World) -> None:
    from playwright.sync_api import expect

    page = sized_page
    page.goto(f"/#/thread/{world.session}")
    first = page.get_by_role("list", name="Messages").get_by_role("article").nth(0)
    versions = first.get_by_role("group", name="versions")
    expect(versions).to_contain_text("version 1/2")
    size = versions.evaluate("e => parseFloat(getComputedStyle(e.querySelector('.count')).fontSize)")
    assert size >= 13, size
    button = versions.get_by_role("button", name="Previous version")
    box = button.bounding_box()
    assert box and box["width"] >= 24 and box["height"] >= 24, box
    expect(first.locator("time")).to_have_attribute("datetime", re.compile(r"^\d{4}-"))
    assert first.locator("time").inner_text().strip()
    page.goto("/#/trees")
    row = page.locator(f'li.tree[data-tree="{world.tree}"]')
    expect(row).to_contain_text("started")
    expect(row).to_contain_text("updated")
