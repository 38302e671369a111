"""Loom (buffer) mode (`#/loom/<session>`) in Chromium over each backend: the document
as one text with who wrote each span (a person, a model, an edit, the draft); N
continuations written by the local model side by side, one picked to switch the
document to it; a selected span edited in place; single-token looming, the likeliest
next tokens with their probabilities, a click putting one into the draft."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from live import serving

from loomdb import Loom
from loomdb.providers.config import ProvidersConfig, builtin_models
from loomdb.server import create_app

pytestmark = [pytest.mark.xdist_group("local-model"), pytest.mark.usefixtures("model_time"),
              pytest.mark.slow]
OPENING = "The lighthouse keeper opened the door and saw"



def document(lm: Loom, session: str, text: str = OPENING) -> None:
    lm.new_tree(text, mode="buffer", session=session, title=f"Story {session}")


def select(page: Any, start: int, end: int) -> None:
    """Select the document's characters start:end, as a person dragging over them."""
    page.evaluate("""([start, end]) => {
        const point = (at) => {
            for (const s of document.querySelectorAll('[data-start]')) {
                if (at >= +s.dataset.start && at <= +s.dataset.end)
                    return [s.firstChild, at - +s.dataset.start];
            }
        };
        const range = document.createRange();
        range.setStart(...point(start));
        range.setEnd(...point(end));
        getSelection().removeAllRanges();
        getSelection().addRange(range);
    }""", [start, end])


def test_each_span_is_coloured_by_who_wrote_it(page: Any, served: Any, name: str) -> None:
    from playwright.sync_api import expect

    lm = served[0]
    document(lm, name)
    lm.append(name, " a ship in the fog.", role="assistant", author="local", source="agent")
    lm.buffer.edit(name, 4, 21, "old sailor")  # "lighthouse keeper"
    lm.buffer.set_draft(name, " It came closer.")
    page.goto(f"/#/loom/{name}")
    doc = page.get_by_role("document", name="Document")
    expect(doc).to_have_text("The old sailor opened the door and saw a ship in the fog. "
                             "It came closer.")
    expect(doc.locator("[data-kind=model]")).to_have_text(" a ship in the fog.")
    expect(doc.locator("[data-kind=draft]")).to_have_text(" It came closer.")
    edits = doc.locator("[data-kind=edit]").all_text_contents()
    assert "".join(edits) and set("".join(edits)) <= set("old sailor")
    assert doc.locator("[data-kind=user]").first.text_content().startswith("The ")
    colours = {k: doc.locator(f"[data-kind={k}]").first.evaluate(
        "e => getComputedStyle(e).backgroundColor") for k in ("user", "model", "edit")}
    assert len(set(colours.values())) == 3, colours
    legend = page.get_by_role("list", name="Authorship colours")
    for says in ("written by a person", "written by a model", "changed by an edit",
                 "draft, not committed"):
        expect(legend).to_contain_text(says)


def test_continuations_side_by_side_pick_one_and_switch(
        page: Any, served: Any, name: str) -> None:
    from playwright.sync_api import expect

    lm = served[0]
    document(lm, name)
    page.goto(f"/#/loom/{name}")
    doc = page.get_by_role("document", name="Document")
    expect(doc).to_have_text(OPENING)
    page.get_by_role("spinbutton", name="Continuations").fill("3")
    page.get_by_role("spinbutton", name="Max tokens").fill("6")
    page.get_by_role("button", name="Generate").click()
    side = page.get_by_role("list", name="Continuations").get_by_role("listitem")
    expect(side).to_have_count(3)
    expect(side.nth(0)).to_have_attribute("aria-current", "true")
    texts = [t.strip() for t in side.locator(".text").all_text_contents()]
    expect(doc.locator("[data-kind=model]")).to_have_text(re.compile(re.escape(texts[0])))
    page.get_by_role("button", name="Pick continuation 3").click()
    expect(side.nth(2)).to_have_attribute("aria-current", "true")
    expect(doc.locator("[data-kind=model]")).to_have_text(re.compile(re.escape(texts[2])))
    assert lm.buffer.text(name).startswith(OPENING)
    assert lm.buffer.text(name).strip().endswith(texts[2])
    expect(page.get_by_role("button", name="Later")).to_be_disabled()
    page.get_by_role("button", name="Earlier").click()
    expect(page.get_by_role("heading", name="Continuations at position 0")).to_be_visible()
    expect(side).to_have_count(1)
    doc.locator("[data-kind=model]").click()  # a span shows the choices at its place
    expect(page.get_by_role("heading", name="Continuations at position 1")).to_be_visible()
    expect(side).to_have_count(3)


def test_a_selected_span_is_edited_in_place(page: Any, served: Any, name: str) -> None:
    from playwright.sync_api import expect

    lm = served[0]
    document(lm, name)
    page.goto(f"/#/loom/{name}")
    doc = page.get_by_role("document", name="Document")
    expect(doc).to_have_text(OPENING)
    select(page, 33, 45)  # "door and saw"
    page.get_by_role("button", name="Edit selection").click()
    form = page.get_by_role("form", name="Edit a span")
    expect(form).to_contain_text("door and saw")
    form.get_by_label("Replacement").fill("window and heard")
    form.get_by_role("button", name="Save edit").click()
    expect(doc).to_have_text("The lighthouse keeper opened the window and heard")
    expect(doc.locator("[data-kind=edit]").first).to_be_visible()
    assert lm.buffer.text(name) == "The lighthouse keeper opened the window and heard"
    assert len(lm.versions(lm.path(name)[0])) == 2


def test_single_token_looming_offers_tokens_and_a_click_extends(
        page: Any, served: Any, name: str) -> None:
    from playwright.sync_api import expect

    lm = served[0]
    document(lm, name)
    page.goto(f"/#/loom/{name}")
    page.get_by_role("button", name="Next tokens").click()
    offered = page.get_by_role("list", name="Next tokens").get_by_role("button")
    expect(offered).to_have_count(8)
    labels = [offered.nth(k).get_attribute("aria-label") or "" for k in range(8)]
    shares = [float(re.search(r"([\d.]+)%$", label).group(1)) for label in labels]  # type: ignore[union-attr]
    assert shares == sorted(shares, reverse=True) and 0 < sum(shares) <= 100.5
    token = json.loads(labels[0].rsplit(" ", 1)[0])
    offered.first.click()
    doc = page.get_by_role("document", name="Document")
    expect(doc.locator("[data-kind=draft]")).to_have_text(token)
    expect(page.get_by_role("textbox", name=re.compile("^Draft"))).to_have_value(token)
    assert lm.buffer.draft(name) == token
    expect(page.get_by_role("status")).to_have_text("")  # asked again, from the longer document
    expect(offered).to_have_count(8)
    expect(offered.first).to_be_enabled()


def test_documents_are_chosen_or_started_from_the_loom(page: Any, served: Any, name: str) -> None:
    from playwright.sync_api import expect

    lm = served[0]
    document(lm, name)
    page.goto("/")
    page.get_by_role("navigation", name="Views").get_by_role("link", name="Loom").click()
    expect(page.get_by_role("heading", level=1, name="Loom")).to_be_visible()
    expect(page.get_by_role("list", name="Buffer documents").get_by_role(
        "link", name=name, exact=True)).to_be_visible()
    form = page.get_by_role("form", name="New buffer document")
    form.get_by_label("Session name").fill(f"{name}-new")
    form.get_by_label("Opening text").fill("Dear diary,")
    form.get_by_role("button", name="Start").click()
    expect(page).to_have_url(re.compile(f"#/loom/{name}-new$"))
    expect(page.get_by_role("document", name="Document")).to_have_text("Dear diary,")
    assert lm.buffer.text(f"{name}-new") == "Dear diary,"


@pytest.fixture(scope="module")
def two_models(served_store: tuple[str, Loom, str]) -> Iterator[tuple[Loom, str]]:
    """The module's store served a second time with two model aliases (both the local
    model): what looming with several models at once needs."""
    _, lm, _ = served_store
    local = builtin_models()["local"]
    config = ProvidersConfig(models={"local": local, "local-b": replace(local, name="local-b")})
    with serving(create_app(lm, config=config)) as base:
        yield lm, base


@pytest.mark.parametrize("size", [(1280, 900), (390, 844)], ids=["desktop", "phone"])
def test_several_models_at_once_a_tree_panel_and_keys(
        new_page: Any, two_models: tuple[Loom, str], name: str, size: tuple[int, int],
        axe: Any, shot: Any) -> None:
    """Two models ticked, g asks both in one request (the server runs them in
    parallel): N continuations each, edged in each model's colour, named in a legend;
    the tree panel lists the document's messages; → moves the focus among the
    continuations, Enter picks one, b bookmarks it, ↑ goes a position earlier; a line
    of the panel switches the document."""
    from playwright.sync_api import expect

    lm, base = two_models
    lm.new_tree(OPENING, mode="buffer", session=name, title=f"Story {name}",
                options={"temperature": 0})
    page = new_page(base)
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(f"/#/loom/{name}")
    panel = page.get_by_role("navigation", name="Document tree")
    expect(panel.get_by_role("listitem")).to_have_count(1)
    legend = page.get_by_role("list", name="Model colours")
    expect(legend.get_by_role("checkbox", name="local-b")).to_be_checked()  # the default
    legend.get_by_role("checkbox", name="local", exact=True).check()
    page.get_by_role("spinbutton", name="Continuations").fill("2")
    page.get_by_role("spinbutton", name="Max tokens").fill("3")
    page.get_by_role("heading", level=1, name="Loom").click()  # the keys go to the page
    with page.expect_request(re.compile(r"/generate$")) as asked:
        page.keyboard.press("g")
    assert json.loads(asked.value.post_data or "{}")["models"] == ["local", "local-b"]
    side = page.get_by_role("list", name="Continuations").get_by_role("listitem")
    expect(side).to_have_count(4)
    assert [side.nth(i).get_attribute("data-model") for i in range(4)].count("local-b") == 2
    edge = {side.nth(i).get_attribute("data-model"): side.nth(i).evaluate(
        "e => getComputedStyle(e).borderLeftColor") for i in range(4)}
    assert len(set(edge.values())) == 2, edge
    expect(panel.get_by_role("listitem")).to_have_count(5)
    expect(side.nth(0)).to_have_attribute("data-focus", "1")
    page.keyboard.press("ArrowRight")
    expect(side.nth(1)).to_have_attribute("data-focus", "1")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    expect(side.nth(2)).to_have_attribute("aria-current", "true")
    picked = side.nth(2).get_attribute("data-model")
    doc = page.get_by_role("document", name="Document")
    expect(doc.locator("[data-kind=model]")).to_have_attribute("data-node", re.compile(".+"))
    assert lm.node(lm.ref(name).node).author == picked
    page.keyboard.press("b")
    expect(page.get_by_role("status").filter(has_text="Bookmarked as")).to_be_visible()
    expect(panel.get_by_text(re.compile("★loom-"))).to_be_visible()
    assert any(r.name.startswith("loom-") for r in lm.refs(kind="bookmark"))
    axe(page)
    shot(page, "loom-models-panel")
    page.keyboard.press("ArrowUp")
    expect(page.get_by_role("heading", name="Continuations at position 0")).to_be_visible()
    # a line of the panel: the document switches to that message's path
    first = lm.path(name)[-1]
    other = next(n for n in lm.children(lm.path(name)[0]) if n != first)
    panel.locator("button").nth(1 + [n for n in lm.children(lm.path(name)[0])].index(other)).click()
    expect(doc.locator("[data-kind=model]")).to_have_attribute("data-node", other)
