"""The page's Redact and Delete buttons in Debian's Chromium (Playwright): each asks
for confirmation; dismissing it changes nothing, accepting it redacts (the message
shows [redacted]) or deletes (the message and what follows leave the page and the
store). No model involved."""

from __future__ import annotations

from typing import Any

import pytest
from test_browser import page  # noqa: F401 (the fixture)

pytestmark = pytest.mark.slow


def test_redact_and_delete_ask_first(page: Any) -> None:  # noqa: F811
    from playwright.sync_api import expect

    page.goto("/classic")
    form = page.get_by_test_id("new-tree")
    form.locator("textarea[name=text]").fill("page q0")
    form.locator("input[name=session]").fill("pg")
    form.get_by_role("button", name="Create").click()
    expect(page.locator("body[data-shown=pg]")).to_have_count(1)
    for role, text in (("assistant", "page-secret-a1"), ("user", "page q2")):
        r = page.request.post("/api/nodes/pg/append", data={"role": role, "text": text})
        assert r.ok, r.text()
    page.reload()
    messages = page.get_by_test_id("message")
    expect(messages).to_have_count(3)

    asked: list[str] = []

    def answer(accept: bool) -> None:
        def on_dialog(dialog: Any) -> None:
            asked.append(dialog.message)
            dialog.accept() if accept else dialog.dismiss()
        page.once("dialog", on_dialog)

    answer(False)  # dismissed: nothing happens
    messages.nth(1).get_by_test_id("redact").click()
    expect(messages.nth(1)).to_contain_text("page-secret-a1")
    answer(True)
    messages.nth(1).get_by_test_id("redact").click()
    expect(messages.nth(1)).to_contain_text("[redacted]")
    expect(messages.nth(1)).not_to_contain_text("page-secret-a1")

    answer(False)
    messages.nth(2).get_by_test_id("delete").click()
    expect(messages).to_have_count(3)
    answer(True)
    messages.nth(1).get_by_test_id("delete").click()
    expect(messages).to_have_count(1)
    expect(messages.nth(0)).to_contain_text("page q0")
    assert len(asked) == 4 and all(m for m in asked)
    lines = page.request.get("/api/forgotten").json()
    assert [e["action"] for e in lines] == ["delete", "redact"]
