"""The shell every view hangs on: each view is reached by a link with its accessible
name, and the page loads nothing from outside the server (no CDN: it works offline)."""

from __future__ import annotations

from typing import Any

import pytest

VIEWS = ["Trees", "Search", "Documents", "Collections", "Inbox", "Tree map", "Share"]


def test_every_view_is_reached_by_its_name(page: Any, served: Any) -> None:
    from playwright.sync_api import expect

    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url)
            if not r.url.startswith(served[1]) else None)
    page.goto("/")
    nav = page.get_by_role("navigation", name="Views")
    for view in VIEWS:
        nav.get_by_role("link", name=view, exact=True).click()
        expect(page.get_by_role("heading", level=1, name=view, exact=True)).to_be_visible()
        expect(nav.get_by_role("link", name=view, exact=True)).to_have_attribute(
            "aria-current", "page")
    assert outside == []


@pytest.mark.parametrize("path", ["/", "/static/app/index.html"])
def test_the_built_page_names_only_its_own_assets(served: Any, path: str) -> None:
    import re

    import httpx

    html = httpx.get(served[1] + path).text
    assert re.findall(r'(?:src|href)="(?!/static/app/)', html) == []
