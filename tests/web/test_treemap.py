"""The tree map (`#/treemap/<tree>`): the whole tree drawn on a canvas, panned and
zoomed, collapsed and hoisted, walked with the keyboard (the focused message read out
by a live region), the current path and the refs marked, a click opening the path in
the thread view; and its one request, `GET /api/trees/{tree}/map`, on both backends,
for a 10,000-node tree too."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from live import serving

import loomdb
from helpers import grow_big
from loomdb import Loom
from loomdb.server import create_app
from loomdb.users import USERS, add_user
from pg import store_of

SHOTS = Path("/tmp/shots/web-verbs")
BACKENDS = [b for b in os.environ.get("LOOMDB_TEST_BACKENDS", "sqlite,postgres").split(",") if b]

@dataclass
class Trip:
    """A small tree: a session `trip` down one branch, another branch with a session
    `porto`, an edited message, a bookmark, a view and five alternative openings."""

    tree: str
    root: str
    plan: str  # the first reply (a branch point)
    food: str  # the end of `trip`
    museums: str  # an edited version of the message before `food`
    porto: str  # the first message of the other branch
    coimbra: str  # the end of `porto`
    names: dict[str, str]


def grow_trip(lm: Loom, tag: str) -> Trip:
    trip, porto = f"trip-{tag}", f"porto-{tag}"
    tree, root = lm.new_tree("Plan a trip to Lisbon in May", session=trip, title=f"Lisbon {tag}")
    plan = lm.append(trip, "Three days: Alfama, Belém, Sintra.", role="assistant")
    ask = lm.append(trip, "Make day two about food", role="user")
    food = lm.append(trip, "Day two: Time Out Market, pastéis de Belém.", role="assistant")
    museums = lm.edit(ask.id, "Make day two about museums")
    lm.fork(plan.id, porto)
    other = lm.append(porto, "What about a day trip to Porto?", role="user")
    lm.append(porto, "Porto is three hours by train.", role="assistant")
    coimbra = lm.append(porto, "And Coimbra?", role="user")
    for i in range(5):
        lm.append(root.id, f"Another opening {i}: what about winter?", role="assistant")
    lm.bookmark(food.id, f"food-{tag}")
    lm.view(f"look-{tag}", plan.id)
    return Trip(tree.id, root.id, plan.id, food.id, museums.id, other.id, coimbra.id,
                {"trip": trip, "porto": porto, "food": f"food-{tag}", "look": f"look-{tag}"})


@pytest.fixture(scope="module")
def trip(served: tuple[Loom, str]) -> Trip:
    return grow_trip(served[0], "m")


@pytest.fixture(scope="module")
def big(served: tuple[Loom, str]) -> str:
    return grow_big(served[0], 10_000)


@pytest.fixture(scope="module")
def bushy(served: tuple[Loom, str]) -> tuple[str, str]:
    """A 4,001-node bushy tree: a root, 40 replies, 99 replies to each (far wider than
    any screen); (its id, the message the session `bushy` ends at)."""
    lm = served[0]
    with lm.unit(USERS):
        tree, root = lm.new_tree("Brainstorm names", title="Bushy")
        end = root.id
        for i in range(40):
            kid = lm.append(root.id, f"Idea {i}", role="assistant")
            for j in range(99):
                leaf = lm.append(kid.id, f"Variant {i}.{j}", role="user")
                if (i, j) == (20, 50):
                    end = leaf.id
        lm.fork(end, "bushy")
    return tree.id, end


def region(page: Any) -> Any:
    return page.get_by_role("region", name="Tree map")


def opened(page: Any, tree: str, at: str | None = None) -> Any:
    """Go to the tree's map and wait until it is drawn; returns its canvas."""
    from playwright.sync_api import expect

    page.goto(f"/#/treemap/{tree}" + (f"?at={quote(at, safe='')}" if at else ""))
    canvas = region(page).locator("canvas")
    expect(canvas).to_have_attribute("data-drawn", re.compile(r"^[1-9]"))
    return canvas


def said(page: Any) -> Any:
    """The live region that reads out the focused message."""
    return region(page).get_by_role("status")


def to_number(locator: Any, attribute: str) -> float:
    return float(locator.get_attribute(attribute))


# -- the API ---------------------------------------------------------------------------
def test_the_map_is_the_whole_tree_in_one_compact_answer(served: Any, trip: Trip) -> None:
    lm, base = served
    data = httpx.get(f"{base}/api/trees/{trip.tree}/map").json()
    nodes = data["nodes"]
    assert data["tree"]["id"] == trip.tree
    assert sorted(nodes["id"]) == sorted(n.id for n in lm.tree_nodes(trip.tree))
    assert {len(column) for column in nodes.values()} == {13}
    row = {node_id: i for i, node_id in enumerate(nodes["id"])}
    # parents and slots are rows; a version fills its original's slot
    assert nodes["parent"][row[trip.root]] == -1
    assert nodes["parent"][row[trip.porto]] == row[trip.plan]
    assert nodes["slot"][row[trip.museums]] == nodes["parent"][row[trip.food]]
    assert nodes["slot"][row[trip.plan]] == row[trip.plan]
    assert nodes["role"][row[trip.plan]] == "assistant"
    assert nodes["text"][row[trip.museums]] == "Make day two about museums"
    # the refs by kind, and the newest session's head is the path shown
    assert {"name": trip.names["food"], "node": row[trip.food]} in data["refs"]["bookmark"]
    assert {"name": trip.names["look"], "node": row[trip.plan]} in data["refs"]["view"]
    assert {r["name"] for r in data["refs"]["session"]} == {trip.names["trip"], trip.names["porto"]}
    assert data["current"] == row[trip.coimbra]
    at = httpx.get(f"{base}/api/trees/{trip.tree}/map",
                   params={"at": trip.names["trip"]}).json()
    assert at["current"] == row[trip.food]


def test_the_map_refuses_what_it_cannot_show(served: Any, trip: Trip) -> None:
    lm, base = served
    other, _ = lm.new_tree("somewhere else")
    unknown = httpx.get(f"{base}/api/trees/01NOSUCHTREE0000000000000/map")
    assert unknown.status_code == 404
    assert unknown.json()["error"]["type"] == "NotFound"
    elsewhere = httpx.get(f"{base}/api/trees/{trip.tree}/map", params={"at": other.root})
    assert elsewhere.status_code == 400
    assert elsewhere.json()["error"]["message"].endswith("is not in this tree")
    long = httpx.get(f"{base}/api/trees/{trip.tree}/map", params={"at": "x" * 1001})
    assert long.status_code == 422


@pytest.fixture(params=BACKENDS)
def shared_store(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[tuple[Loom, str]]:
    """A store with users, served (its own: the module's store has none)."""
    with store_of(request.param, str(tmp_path / "store")) as url, loomdb.open(url) as lm, \
            serving(create_app(lm)) as base:
        yield lm, base


def test_a_user_maps_only_their_own_trees(shared_store: tuple[Loom, str]) -> None:
    lm, base = shared_store
    tokens = {who: add_user(lm, who)[1] for who in ("ann", "bob")}
    auth = {who: {"Authorization": f"Bearer {t}"} for who, t in tokens.items()}
    made = httpx.post(f"{base}/api/trees", json={"text": "ann's secret", "session": "ann-s"},
                      headers=auth["ann"]).json()
    mine = httpx.get(f"{base}/api/trees/{made['tree']}/map", headers=auth["ann"])
    assert mine.status_code == 200
    assert mine.json()["nodes"]["text"] == ["ann's secret"]
    assert mine.json()["refs"]["session"] == [{"name": "ann-s", "node": 0}]
    for path in (made["tree"], "ann-s"):
        theirs = httpx.get(f"{base}/api/trees/{path}/map", headers=auth["bob"])
        assert theirs.status_code == 404, theirs.text
    assert httpx.get(f"{base}/api/trees/{made['tree']}/map").status_code == 401


def test_a_ten_thousand_node_map_in_one_request(served: Any, big: str) -> None:
    data = httpx.get(f"{served[1]}/api/trees/{big}/map", timeout=60).json()
    assert len(data["nodes"]["id"]) == 10_000
    assert data["refs"]["session"][0]["name"] == "big"
    places = [i for i, s in enumerate(data["nodes"]["slot"]) if s == i]
    assert 9_800 < len(places) < 10_000  # an edit now and then folds into its place


# -- the page --------------------------------------------------------------------------
def test_the_map_draws_the_tree_with_the_current_path_and_the_refs(page: Any, trip: Trip) -> None:
    from playwright.sync_api import expect

    canvas = opened(page, trip.tree)
    assert canvas.get_attribute("data-nodes") == "13"
    assert canvas.get_attribute("data-shown") == "12"  # the edited version folds in
    assert canvas.get_attribute("data-drawn") == "12"  # all of it fits
    assert page.evaluate("""() => {
        const c = document.querySelector('section[aria-label="Tree map"] canvas');
        const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        const seen = new Set();
        for (let i = 0; i < px.length; i += 4 * 97) seen.add(px.slice(i, i + 3).join());
        return seen.size;
    }""") > 5  # drawn: many colours, not a blank canvas
    map_ = region(page)
    # what a screen reader finds: the controls, the map by name, the focused message
    # and the refs beside it, the live region
    expect(map_).to_match_aria_snapshot("""
      - group "Map controls":
        - button "Zoom in"
        - button "Zoom out"
        - button "Fit"
      - 'application "Lisbon m: 13 messages"'
      - complementary "Focused message":
        - heading "Focused" [level=2]
        - paragraph:
          - link "Open its thread"
        - heading "Refs" [level=2]
        - heading "Sessions" [level=3]
        - heading "Views" [level=3]
        - heading "Bookmarks" [level=3]
      - status
    """)
    # the path shown is the newest session's (porto), ending at its head
    expect(map_.get_by_role("link", name="Open the current path")).to_have_attribute(
        "href", f"#/thread/{trip.coimbra}?at={trip.coimbra}")
    expect(said(page)).to_contain_text("end of the current path")
    expect(said(page)).to_contain_text(f"session {trip.names['porto']}")
    # the refs by kind; choosing one shows its path
    for kind, ref in (("session", "trip"), ("session", "porto"), ("view", "look"),
                      ("bookmark", "food")):
        expect(map_.get_by_role("button", name=f"{kind} {trip.names[ref]}")).to_be_visible()
    map_.get_by_role("button", name=f"bookmark {trip.names['food']}").click()
    expect(said(page)).to_contain_text(f"bookmark {trip.names['food']}")
    expect(said(page)).to_contain_text(f"session {trip.names['trip']}")
    expect(said(page)).to_contain_text("end of the current path")
    expect(map_.get_by_role("link", name="Open the current path")).to_have_attribute(
        "href", f"#/thread/{trip.food}?at={trip.food}")
    page.screenshot(path="/tmp/treemap-trip.png")


def test_the_map_pans_and_zooms(page: Any, trip: Trip) -> None:
    from playwright.sync_api import expect

    canvas = opened(page, trip.tree)
    start = to_number(canvas, "data-zoom")
    region(page).get_by_role("button", name="Zoom in").click()
    expect(canvas).not_to_have_attribute("data-zoom", f"{start:.3f}")
    bigger = to_number(canvas, "data-zoom")
    assert bigger == pytest.approx(start * 1.4, rel=0.01)
    box = canvas.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, 400)  # the wheel zooms out
    expect(canvas).not_to_have_attribute("data-zoom", f"{bigger:.3f}")
    assert to_number(canvas, "data-zoom") < bigger
    # a drag pans: the focused message moves with the picture
    app = region(page).get_by_role("application")
    app.press("0")  # fit again
    expect(canvas).to_have_attribute("data-zoom", f"{start:.3f}")
    expect(region(page).get_by_role("button", name="Whole tree")).to_have_count(0)  # it fits
    ring = region(page).locator(".ring")
    before = ring.bounding_box()
    style = ring.get_attribute("style")
    page.mouse.move(box["x"] + 40, box["y"] + 200)
    page.mouse.down()
    page.mouse.move(box["x"] + 100, box["y"] + 160, steps=5)
    page.mouse.up()
    expect(ring).not_to_have_attribute("style", style)
    after = ring.bounding_box()
    assert (after["x"] - before["x"], after["y"] - before["y"]) == pytest.approx((60, -40), abs=2)
    expect(page).to_have_url(re.compile(r"#/treemap/"))  # a drag is not a click


def test_the_keyboard_walks_the_map_and_the_live_region_reads_it(page: Any, trip: Trip) -> None:
    from playwright.sync_api import expect

    opened(page, trip.tree, at=trip.names["trip"])
    app = region(page).get_by_role("application")
    app.focus()
    app.press("Home")
    expect(said(page)).to_contain_text("user, level 1, 6 replies")
    expect(said(page)).to_contain_text("Plan a trip to Lisbon in May")
    app.press("ArrowDown")  # to the reply on the current path (trip's)
    expect(said(page)).to_contain_text("assistant, level 2, 1 of 6 branches, 2 replies")
    expect(said(page)).to_contain_text(f"view {trip.names['look']}")
    app.press("ArrowRight")
    expect(said(page)).to_contain_text("2 of 6 branches")
    expect(said(page)).to_contain_text("Another opening 0")
    app.press("ArrowLeft")
    app.press("ArrowDown")
    expect(said(page)).to_contain_text("version 1 of 2")
    expect(said(page)).to_contain_text("Make day two about food")
    app.press("ArrowRight")  # the branch beside it: porto's
    expect(said(page)).to_contain_text("What about a day trip to Porto?")
    app.press("End")
    expect(said(page)).to_contain_text("Day two: Time Out Market")


def test_collapsing_hides_a_subtree_and_expanding_brings_it_back(page: Any, trip: Trip) -> None:
    from playwright.sync_api import expect

    canvas = opened(page, trip.tree)
    app = region(page).get_by_role("application")
    app.focus()
    app.press("Home")
    app.press("ArrowDown")  # the first reply: 6 messages below it
    app.press(" ")
    expect(said(page)).to_contain_text("collapsed, 5 hidden")
    expect(canvas).to_have_attribute("data-shown", "7")
    region(page).get_by_role("button", name="Expand").click()
    expect(canvas).to_have_attribute("data-shown", "12")
    region(page).get_by_role("button", name="Collapse").click()
    expect(canvas).to_have_attribute("data-shown", "7")
    # a ref below a collapsed message opens the way to it
    region(page).get_by_role("button", name=f"session {trip.names['porto']}").click()
    expect(canvas).to_have_attribute("data-shown", "12")
    expect(said(page)).to_contain_text("And Coimbra?")


def test_hoisting_shows_one_subtree_until_the_whole_tree_is_asked_for(page: Any, trip: Trip) -> None:
    from playwright.sync_api import expect

    canvas = opened(page, trip.tree)
    map_ = region(page)
    map_.get_by_role("button", name=f"view {trip.names['look']}").click()
    map_.get_by_role("button", name="Hoist").click()
    expect(canvas).to_have_attribute("data-shown", "6")
    expect(map_).to_contain_text("Hoisted at “Three days: Alfama, Belém, Sintra.”")
    app = map_.get_by_role("application")
    app.press("ArrowUp")  # the hoisted message is the top
    expect(said(page)).to_contain_text("level 1")
    map_.get_by_role("button", name="Show whole tree").click()
    expect(canvas).to_have_attribute("data-shown", "12")
    expect(map_.get_by_role("button", name="Show whole tree")).to_have_count(0)
    app.press("h")
    expect(canvas).to_have_attribute("data-shown", "6")
    app.press("Escape")
    expect(canvas).to_have_attribute("data-shown", "12")


def test_a_click_on_a_message_opens_its_path(page: Any, trip: Trip) -> None:
    from playwright.sync_api import expect

    opened(page, trip.tree)
    map_ = region(page)
    map_.get_by_role("button", name=f"session {trip.names['trip']}").click()
    ring = map_.locator(".ring")
    expect(ring).to_have_attribute("data-node", trip.food)
    box = ring.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    expect(page).to_have_url(re.compile(re.escape(f"#/thread/{trip.food}?at={trip.food}") + "$"))
    # and Enter does the same for the focused message
    page.go_back()
    app = region(page).get_by_role("application")
    expect(region(page).locator(".ring")).to_have_attribute("data-node", trip.food)
    app.press("ArrowUp")
    app.press("Enter")
    ask = page.evaluate("() => location.hash")
    assert ask.startswith("#/thread/") and trip.food not in ask


def test_the_map_without_a_tree_lists_the_trees(page: Any, trip: Trip) -> None:
    from playwright.sync_api import expect

    page.goto("/#/treemap")
    page.get_by_role("list", name="Trees to map").get_by_role("link", name="Lisbon m", exact=True).click()
    expect(region(page).get_by_role("application")).to_have_accessible_name(
        re.compile(r"13 messages"))


def test_a_ten_thousand_node_map_is_drawn_and_answers(page: Any, big: str,
                                                     served: tuple[Loom, str]) -> None:
    from playwright.sync_api import expect

    canvas = opened(page, big)
    assert canvas.get_attribute("data-nodes") == "10000"
    shown = int(canvas.get_attribute("data-shown"))
    # up close only what is in view is drawn
    assert 0 < int(canvas.get_attribute("data-drawn")) < 100 < shown
    expect(said(page)).to_contain_text("end of the current path, session big")
    map_ = region(page)
    map_.get_by_role("button", name="Whole tree").click()
    expect(canvas).to_have_attribute("data-drawn", str(shown))  # the whole, as dots
    app = map_.get_by_role("application")
    app.press("Home")
    expect(said(page)).to_contain_text("Where should the conversation start?")
    app.press(" ")
    expect(canvas).to_have_attribute("data-shown", "1")
    app.press(" ")
    expect(canvas).to_have_attribute("data-shown", str(shown))
    app.press("End")
    head = served[0].resolve("big").node
    # the ring moves on the next frame, after the view has followed the focus there
    ring = map_.locator(f".ring[data-node='{head}']")
    expect(ring).to_be_attached()
    box = ring.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    expect(page).to_have_url(re.compile(re.escape(f"#/thread/{head}?at={head}") + "$"))


def test_fit_keeps_a_bushy_tree_readable_with_an_overview(page: Any, bushy: tuple[str, str],
                                                          shot: Any, axe: Any) -> None:
    """4,001 nodes side by side: the whole would be a sliver, so Fit shows the current
    path at a readable zoom (boxes with their words) and an overview of the whole; a click on
    the overview moves the view; Whole tree still shows all of it."""
    from playwright.sync_api import expect

    tree, end = bushy
    canvas = opened(page, tree)
    assert canvas.get_attribute("data-nodes") == "4001"
    map_ = region(page)
    map_.get_by_role("button", name="Fit").click()
    expect(map_.get_by_role("status").filter(has_text="fitted to the current path")).to_be_visible()
    assert to_number(canvas, "data-zoom") >= 0.6  # boxes with their words
    assert 0 < int(canvas.get_attribute("data-drawn")) < 4001
    expect(map_.locator(f".ring[data-node='{end}']")).to_be_attached()  # the path's end in view
    overview = map_.get_by_test_id("overview")
    expect(overview).to_be_visible()
    axe(page)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "treemap-bushy-fit-1280.png"))
    shot(page, "treemap-bushy-fit")
    zoom = canvas.get_attribute("data-zoom")
    view = overview.locator(".view")
    style = view.get_attribute("style")
    box = overview.bounding_box()
    page.mouse.click(box["x"] + 8, box["y"] + box["height"] / 2)
    expect(view).not_to_have_attribute("style", style)  # the view moved there
    expect(map_.locator(".ring")).to_have_count(0)  # away from the path's end
    assert canvas.get_attribute("data-zoom") == zoom
    map_.get_by_role("button", name="Whole tree").click()
    expect(canvas).to_have_attribute("data-drawn", "4001")
    assert to_number(canvas, "data-zoom") < 0.05


def test_branch_points_only_folds_each_run_into_one_box(page: Any, trip: Trip, axe: Any) -> None:
    from playwright.sync_api import expect

    canvas = opened(page, trip.tree, at=trip.coimbra)
    assert canvas.get_attribute("data-shown") == "12"
    map_ = region(page)
    toggle = map_.get_by_role("button", name="Branch points only")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "true")
    # porto's question, answer and Coimbra are one box; the question about food and its answer another
    expect(canvas).to_have_attribute("data-shown", "9")
    expect(said(page)).to_contain_text("a run of 3 messages")
    expect(said(page)).to_contain_text("What about a day trip to Porto?")
    axe(page)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "treemap-runs-1280.png"))
    app = map_.get_by_role("application")
    app.press("ArrowUp")
    expect(said(page)).to_contain_text("2 replies")
    app.press("b")  # the key, back to every message
    expect(toggle).to_have_attribute("aria-pressed", "false")
    expect(canvas).to_have_attribute("data-shown", "12")


def test_a_map_of_an_unknown_tree_says_so(page: Any) -> None:
    from playwright.sync_api import expect

    page.goto("/#/treemap/01NOSUCHTREE0000000000000")
    expect(region(page).get_by_role("alert")).to_have_text("unknown headish: '01NOSUCHTREE0000000000000'")
