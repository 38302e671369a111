"""Generation and logprobs in the conversation view, with the built-in local model: N
answers streamed into view as they are written, then stored as alternatives beside
each other; regenerate beside an answer; each generated token coloured by its
probability."""

from __future__ import annotations

import re
from typing import Any

import pytest
from test_thread import messages, opened

from loomdb.logprobs import of_node, rows

pytestmark = [pytest.mark.xdist_group("local-model"), pytest.mark.usefixtures("model_time")]



#: every piece of text the page showed in a streaming alternative, kept by the page
WATCH = """() => {
  window.streamed = [];
  new MutationObserver(() => {
    for (const el of document.querySelectorAll('[data-testid="streaming"] [aria-label^="Answer"]')) {
      if (el.textContent) window.streamed.push(el.textContent);
    }
  }).observe(document.body, { childList: true, subtree: true, characterData: true });
}"""


def test_generate_streams_n_answers_into_alternatives(page: Any, served: Any,
                                                      name: str) -> None:
    from playwright.sync_api import expect

    lm = served[0]
    lm.new_tree("Name a colour.", session=name)
    opened(page, name, 1)
    page.evaluate(WATCH)
    page.get_by_role("combobox", name="Answers").select_option("2")
    page.get_by_text("More options").click()
    page.get_by_role("spinbutton", name="Max tokens").fill("4")
    expect(page.get_by_role("combobox", name="Model")).to_have_value("local")
    page.get_by_role("button", name="Answer", exact=True).click()
    expect(messages(page)).to_have_count(2)
    answer = messages(page).nth(1)
    expect(answer.get_by_role("group", name="alternatives")).to_contain_text("1/2")
    assert page.evaluate("() => window.streamed.length") > 0  # shown while it was written
    stored = lm.node(lm.ref(name).node)
    assert stored.role == "assistant" and len(lm.siblings(stored.id)) == 1
    # regenerate beside the answer: a third alternative, shown in the session
    page.get_by_role("combobox", name="Answers").select_option("1")
    answer.get_by_role("button", name="Regenerate").click()
    expect(messages(page).nth(1).get_by_role("group", name="alternatives")).to_contain_text("3/3")
    expect(page).to_have_url(re.compile(f"#/thread/{name}$"))
    assert len(lm.siblings(lm.ref(name).node)) == 2


def test_logprobs_colour_each_token(page: Any, served: Any, name: str) -> None:
    from playwright.sync_api import expect

    lm = served[0]
    lm.new_tree("Name a primary colour.", session=name)
    answer = lm.generate(name, models=["local"], max_tokens=6,
                         options={"logprobs": True, "top_logprobs": 3}).nodes[0]
    expected = rows(of_node(lm, lm.node(answer.id)))
    opened(page, name, 2)
    assert messages(page).nth(0).get_by_role("button", name="Logprobs").count() == 0
    toggle = messages(page).nth(1).get_by_role("button", name="Logprobs")
    toggle.click()
    tokens = messages(page).nth(1).get_by_test_id("logprob-token")
    expect(tokens).to_have_count(len(expected))
    for k, row in enumerate(expected):
        assert tokens.nth(k).text_content() == row["token"]
        assert float(tokens.nth(k).get_attribute("data-probability") or "nan") == pytest.approx(
            row["probability"], abs=1e-4)
    expect(messages(page).nth(1).get_by_test_id("logprobs-legend")).to_be_visible()
    page.screenshot(path="/tmp/thread-logprobs.png")
    toggle.click()
    expect(tokens).to_have_count(0)
