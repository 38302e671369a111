"""Browser headers and `/docs` (issue 22, item 11), over a live server.

Every answer carries a Content-Security-Policy (this server's scripts only, no inline
script, no framing), `nosniff` and `Referrer-Policy: no-referrer`; `/docs` loads
Swagger UI from loomdb itself, never from a CDN, on the origin that holds tokens. The
page keeps working under that policy: in Debian's Chromium it makes a tree and imports
a file through its own form (the raw upload), and `/docs` renders, with no policy
violation reported. On the main this was written against, no such header was sent and
`/docs` loaded its script from a CDN.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from live import client, serving

import loomdb
from loomdb import Loom
from loomdb.gateway import create_gateway_app
from loomdb.server import create_app

CHROMIUM = "/usr/bin/chromium"


def policy_of(r: httpx.Response) -> dict[str, str]:
    csp = r.headers.get("content-security-policy", "")
    return {d.split()[0]: d for d in (p.strip() for p in csp.split(";")) if d}


def check_headers(r: httpx.Response) -> None:
    policy = policy_of(r)
    assert policy.get("frame-ancestors") == "frame-ancestors 'none'", r.headers
    assert policy.get("script-src") == "script-src 'self'"
    assert "unsafe-inline" not in r.headers["content-security-policy"]
    assert r.headers.get("x-content-type-options") == "nosniff"
    assert r.headers.get("referrer-policy") == "no-referrer"


def test_every_answer_carries_the_headers(served: tuple[Loom, str]) -> None:
    _, base = served
    with client(base) as c:
        for r in (c.get("/"), c.get("/static/docs.js"), c.get("/api/trees"),
                  c.get("/api/nodes/no-such-thing"), c.get("/openapi.json"),
                  c.post("/api/trees", json={"text": "x"}, headers={"origin": "http://e.x"}),
                  c.get("/docs")):
            check_headers(r)
    with serving(create_gateway_app(served[0])) as gw, client(gw) as c:
        check_headers(c.get("/v1/models"))


def test_the_page_has_no_inline_script(served: tuple[Loom, str]) -> None:
    _, base = served
    with client(base) as c:
        html = c.get("/").text
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", html, re.S)
    assert scripts and all('src="/' in attrs and not body.strip() for attrs, body in scripts)
    assert not re.search(r"\son[a-z]+=", html)  # no inline handlers either


def test_docs_come_from_this_server(served: tuple[Loom, str]) -> None:
    _, base = served
    with client(base) as c:
        page = c.get("/docs")
        assert page.status_code == 200
        sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
        assert sources and all(s.startswith("/") for s in sources), sources
        assert "<script>" not in page.text  # every script is a file
        for s in sources:
            assert c.get(s).status_code == 200, s


@pytest.fixture
def browser_page(tmp_path: Path) -> Any:
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail("Debian's chromium is missing: `make install` installs it")
    with loomdb.open(str(tmp_path / "store")) as lm, serving(create_app(lm)) as base, \
            sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            tab = browser.new_page(base_url=base)
            tab.set_default_timeout(60_000)
            yield tab
        finally:
            browser.close()


@pytest.mark.slow
def test_the_page_and_docs_work_under_the_policy(browser_page: Any) -> None:
    from playwright.sync_api import expect

    page = browser_page
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text)
            if "Content Security Policy" in m.text else None)
    page.goto("/")
    form = page.get_by_role("form", name="New conversation")
    form.get_by_label("First message").fill("Under a strict policy")
    form.get_by_label("Session name").fill("strict")
    form.get_by_role("button", name="Start").click()
    expect(page.get_by_test_id("message")).to_have_count(1)
    page.goto("/docs")
    expect(page.locator(".swagger-ui .opblock").first).to_be_visible()
    assert violations == []
