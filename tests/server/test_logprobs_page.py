"""Token logprobs over HTTP and colour-coded on the web page: a real local-model
generation with logprobs, a real server on loopback, Debian's Chromium."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from live import serving
from test_browser import CHROMIUM

import loomdb
from loomdb.logprobs import of_node, rows
from loomdb.server import create_app

pytestmark = [pytest.mark.xdist_group("local-model"), pytest.mark.slow]


@pytest.fixture
def generated(tmp_path: Path) -> Iterator[tuple[Any, str, str, str]]:
    """A store with a question and an answer generated with 3 alternatives per token."""
    with loomdb.open(str(tmp_path / "store")) as lm:
        _, root = lm.new_tree("Name a primary colour.", session="s")
        answer = lm.generate("s", models=["local"], max_tokens=8,
                             options={"logprobs": True, "top_logprobs": 3}).nodes[0]
        with serving(create_app(lm)) as base:
            yield lm, base, root.id, answer.id


def test_the_endpoint_answers_what_show_logprobs_prints(generated: tuple[Any, str, str, str]) -> None:
    lm, base, question, answer = generated
    got = httpx.get(f"{base}/api/nodes/{answer}/logprobs", timeout=30)
    assert got.status_code == 200
    expected = {"node": answer, "tokens": rows(of_node(lm, lm.node(answer)))}
    assert got.json() == expected and expected["tokens"]
    assert all(len(t["top"]) <= 3 for t in expected["tokens"])
    refused = httpx.get(f"{base}/api/nodes/{question}/logprobs", timeout=30)
    assert refused.status_code == 400
    assert "has no logprobs" in refused.json()["error"]["message"]


def test_the_page_colours_each_token_by_its_probability(
    generated: tuple[Any, str, str, str], tmp_path: Path,
) -> None:
    from playwright.sync_api import expect, sync_playwright

    lm, base, question, answer = generated
    expected = rows(of_node(lm, lm.node(answer)))
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            tab = browser.new_page(base_url=base)
            tab.goto("/classic#/h/s")
            expect(tab.locator("body[data-shown=s]")).to_have_count(1)
            messages = tab.get_by_test_id("message")
            expect(messages).to_have_count(2)
            expect(messages.nth(0).get_by_test_id("logprobs-toggle")).to_have_count(0)
            messages.nth(1).get_by_test_id("logprobs-toggle").click()
            tokens = messages.nth(1).get_by_test_id("logprob-token")
            expect(tokens).to_have_count(len(expected))
            expect(messages.nth(1).get_by_test_id("logprobs-legend")).to_be_visible()
            for k, row in enumerate(expected):
                token = tokens.nth(k)
                assert token.text_content() == row["token"]
                assert float(token.get_attribute("data-probability") or "nan") == pytest.approx(
                    row["probability"], abs=1e-4)
                title = token.get_attribute("title") or ""
                assert f"p={row['probability']:.3f}" in title
                if row["top"]:
                    assert "alternatives:" in title
            colours = {tokens.nth(k).evaluate("e => getComputedStyle(e).backgroundColor")
                       for k in range(len(expected))}
            probabilities = {round(r["probability"], 2) for r in expected}
            assert len(colours) > 1 or len(probabilities) == 1
            messages.nth(1).get_by_test_id("logprobs-toggle").click()  # back to the text
            expect(tokens).to_have_count(0)
        finally:
            browser.close()
