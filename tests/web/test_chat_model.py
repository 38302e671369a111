"""The chat with the real local model (both backends): Enter sends and the answer
streams into view, then is stored where the session points; Shift+Enter is a new
line; the model picker offers the served models; Stop (Esc) ends a stream and keeps
what came, stored as an incomplete answer; Edit's "Save & regenerate" writes a
version and a new answer under it, the old answer kept as the other version's.
First at 1280x900, then at 390x844 (the composer and Stop on a phone)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from loomdb import Loom

pytestmark = [pytest.mark.xdist_group("local-model"), pytest.mark.usefixtures("model_time")]



def messages(page: Any) -> Any:
    return page.get_by_role("list", name="Messages").get_by_role("article")


def test_enter_sends_stop_keeps_what_came_and_save_regenerates(
        page: Any, served: Any, name: str) -> None:
    from playwright.sync_api import expect

    lm: Loom = served[0]
    # greedy: the small model's answers are the same each run (sampled, it now and then
    # ended the long answer below before Stop could be pressed)
    lm.new_tree("You answer briefly.", session=name, role="system", options={"temperature": 0})
    page.goto(f"/#/thread/{name}")
    expect(page.get_by_role("region", name="Thread")).to_have_attribute("data-ready", "1")
    model = page.get_by_role("combobox", name="Model")
    expect(model).to_have_value("local")
    assert "local" in model.locator("option").all_text_contents()
    page.get_by_text("More options").click()
    page.get_by_role("spinbutton", name="Max tokens").fill("6")
    box = page.get_by_role("textbox", name="Message")
    box.fill("Say hello")
    box.press("Shift+Enter")
    box.type("in French.")
    assert box.input_value() == "Say hello\nin French."
    expect(messages(page)).to_have_count(1)  # Shift+Enter sent nothing
    box.press("Enter")
    expect(messages(page)).to_have_count(3)
    expect(messages(page).nth(1)).to_contain_text("in French.")
    answer = lm.node(lm.ref(name).node)
    assert answer.role == "assistant" and lm.path(name)[-2] == messages(page).nth(1).get_attribute(
        "data-node")
    expect(messages(page).nth(2)).to_contain_text(answer.content[0]["text"].strip()[:10])
    expect(page).to_have_url(re.compile(f"#/thread/{name}$"))

    # on a phone: a long answer, stopped with Esc after its first words
    page.set_viewport_size({"width": 390, "height": 844})
    page.get_by_role("spinbutton", name="Max tokens").fill("300")
    box.fill("Count from one to one hundred, one number per line.")
    box.press("Enter")
    streaming = page.get_by_test_id("streaming").get_by_label("Answer 1")
    expect(streaming).to_contain_text(re.compile(r"\S"))
    expect(page.get_by_role("button", name="Stop")).to_be_visible()
    box.press("Escape")
    expect(messages(page)).to_have_count(5)
    stopped = messages(page).nth(4)
    expect(stopped).to_contain_text("stopped")
    kept = lm.node(lm.ref(name).node)
    assert kept.provenance and kept.provenance.get("incomplete") is True
    assert (kept.tokens or 0) < 300
    assert page.get_by_role("button", name="Send").is_visible()

    # Save & regenerate the first question: a version and its own answer
    page.set_viewport_size({"width": 1280, "height": 900})
    page.get_by_role("spinbutton", name="Max tokens").fill("6")
    first = messages(page).nth(1)
    first.get_by_role("button", name="Edit").click()
    first.get_by_role("textbox", name="New version").fill("Say goodbye in French.")
    first.get_by_role("button", name="Save & regenerate").click()
    expect(messages(page)).to_have_count(3)
    expect(messages(page).nth(1)).to_contain_text("Say goodbye in French.")
    expect(messages(page).nth(1).get_by_role("group", name="versions")).to_contain_text("2/2")
    new_answer = lm.ref(name).node
    assert lm.node(new_answer).parent == lm.path(name)[1] != answer.parent
    # the first version still has its own answer (and what followed it)
    messages(page).nth(1).get_by_role("button", name="Previous version").click()
    expect(messages(page).nth(1)).to_contain_text("in French.")
    expect(messages(page)).to_have_count(5)
    expect(page).to_have_url(re.compile(f"#/thread/{name}$"))
