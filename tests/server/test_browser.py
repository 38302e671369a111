"""The web page end to end in Debian's Chromium (driven by Playwright, never a
downloaded browser): create a tree, generate two alternatives with the local model,
switch between them, edit an earlier message, check the context shown, fork, import a
sample. A failing test leaves a screenshot in test-artifacts/ (or $LOOMDB_ARTIFACTS)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from live import serving

import loomdb
from loomdb.server import create_app

pytestmark = [pytest.mark.xdist_group("local-model"), pytest.mark.slow]

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "interop"
ARTIFACTS = Path(os.environ.get("LOOMDB_ARTIFACTS", ROOT / "test-artifacts"))


@pytest.fixture
def page(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    from playwright.sync_api import expect, sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail("Debian's chromium is missing: `make install` installs it "
                    "(apt-get install chromium)")
    with loomdb.open(str(tmp_path / "store")) as lm, serving(create_app(lm)) as base, \
            sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        tab = browser.new_page(base_url=base)
        tab.set_default_timeout(120_000)  # the local model shares two cores with the suite
        expect.set_options(timeout=120_000)
        try:
            yield tab
        finally:
            report = getattr(request.node, "rep_call", None)
            if report is not None and report.failed:
                ARTIFACTS.mkdir(parents=True, exist_ok=True)
                tab.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
            browser.close()


def test_the_page_from_a_new_tree_to_an_import(page: Any) -> None:
    from playwright.sync_api import expect

    page.goto("/classic")
    form = page.get_by_test_id("new-tree")
    form.locator("textarea[name=text]").fill("What is the capital of France?")
    form.locator("input[name=session]").fill("trip")
    form.get_by_role("button", name="Create").click()
    expect(page.locator("body[data-shown=trip]")).to_have_count(1)
    messages = page.get_by_test_id("message")
    expect(messages).to_have_count(1)

    # two alternatives from the local model, streamed, then a switcher on the answer
    page.locator("#gen-n").fill("2")
    page.locator("#gen-max").fill("4")
    page.get_by_test_id("generate").click()
    expect(messages).to_have_count(2)
    answer = messages.nth(1)
    expect(answer.get_by_test_id("branch-count")).to_have_text("branch 1/2")
    first = answer.get_attribute("data-node")
    answer.get_by_test_id("next-branch").click()
    expect(page).not_to_have_url(re.compile(r"#/h/trip$"))
    expect(messages.nth(1).get_by_test_id("branch-count")).to_have_text("branch 2/2")
    expect(messages.nth(1)).not_to_have_attribute("data-node", first or "")

    # back on the session: edit the question; the answer stays after the new version
    page.locator("[data-ref=trip]").click()
    expect(page.locator("body[data-shown=trip]")).to_have_count(1)
    messages.nth(0).get_by_role("button", name="Edit").click()
    page.get_by_test_id("edit-text").fill("What is the capital of Italy?")
    page.get_by_test_id("edit-save").click()
    expect(messages.nth(0).locator(".body")).to_have_text("What is the capital of Italy?")
    expect(messages.nth(0).get_by_test_id("version-count")).to_have_text("version 2/2")
    expect(messages).to_have_count(2)

    # the context shown is the edited one, in the provider's format
    page.get_by_test_id("ctx-format").select_option("openai")
    page.get_by_test_id("show-context").click()
    expect(page.get_by_test_id("context")).to_contain_text('"content": "What is the capital of Italy?"')
    expect(page.get_by_test_id("context")).to_contain_text('"role": "assistant"')

    # fork from the question: a new session, listed with its lineage
    page.once("dialog", lambda d: d.accept("trip-b"))
    messages.nth(0).get_by_role("button", name="Fork").click()
    expect(page.locator("body[data-shown=trip-b]")).to_have_count(1)
    expect(messages).to_have_count(1)
    expect(page.get_by_test_id("trees")).to_contain_text("forked from trip")

    # import a real export by upload
    page.locator("#import input[type=file]").set_input_files(
        str(FIXTURES / "openwebui_export_openwebui-importer_webui-json.json"))
    page.get_by_test_id("import").get_by_role("button", name="Upload").click()
    expect(page.get_by_test_id("import-result")).to_contain_text(re.compile(r"imported [1-9]"))
    expect(page.get_by_test_id("trees")).to_contain_text("imported openwebui")


def test_markdown_is_rendered_and_sanitized(page: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    page.goto("/classic")
    form = page.get_by_test_id("new-tree")
    form.locator("textarea[name=text]").fill(
        "**bold** <script>window.pwned = 1</script> <img src=x onerror=\"window.pwned=2\">")
    form.locator("input[name=session]").fill("md")
    form.get_by_role("button", name="Create").click()
    body = page.get_by_test_id("message").nth(0).locator(".body")
    expect(body.locator("strong")).to_have_text("bold")
    assert body.locator("script, img").count() == 0
    assert page.evaluate("window.pwned") is None


def test_a_buffer_document_with_its_draft_and_continuations(page: Any) -> None:
    from playwright.sync_api import expect

    page.goto("/classic")
    form = page.get_by_test_id("new-tree")
    form.locator("textarea[name=text]").fill("The lighthouse keeper")
    form.locator("input[name=session]").fill("tale")
    form.locator("select[name=mode]").select_option("buffer")
    form.get_by_role("button", name="Create").click()
    expect(page.locator("body[data-shown=tale]")).to_have_count(1)
    expect(page.get_by_test_id("buffer")).to_be_visible()
    expect(page.get_by_test_id("thread")).to_be_hidden()
    page.locator("#draft").fill(" climbed the stairs")
    page.locator("#draft-form").get_by_role("button").click()
    document = page.get_by_test_id("document")
    expect(document).to_have_text("The lighthouse keeper climbed the stairs")
    expect(document.locator(".draft")).to_have_text(" climbed the stairs")
    expect(page.get_by_test_id("continuations").locator("li")).to_have_count(1)
