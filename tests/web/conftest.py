"""The web app end to end: a live `loomdb serve` app on loopback over each backend, driven
by Playwright in Debian's Chromium (never a downloaded browser build).

A failing test leaves a full-page screenshot in test-artifacts/web/ (or
$LOOMDB_ARTIFACTS/web). One browser per test process; one store and one server per
backend per module; each test names its own sessions and documents (`name`)."""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "server"))

from live import serving  # noqa: E402

import loomdb  # noqa: E402
from loomdb import Loom  # noqa: E402
from loomdb.server import create_app  # noqa: E402
from pg import store_of  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("LOOMDB_ARTIFACTS", ROOT / "test-artifacts")) / "web"
BACKENDS = [b for b in os.environ.get("LOOMDB_TEST_BACKENDS", "sqlite,postgres").split(",") if b]
#: the sizes every view is checked at: a laptop's window and a phone's
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
#: axe-core, from the page's own devDependencies (never a CDN)
AXE = ROOT / "web" / "node_modules" / "axe-core" / "axe.min.js"
#: how long the page may take to show what a test waits for (two cores shared with the
#: rest of the suite; a pass is normally well under a second)
TIMEOUT_MS = 30_000
#: the same for what waits on the local model's answer
MODEL_TIMEOUT_MS = 120_000

pytestmark = pytest.mark.slow


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Keep each phase's report on the item, so the page fixture can tell a test failed."""
    outcome = yield
    setattr(item, f"rep_{call.when}", outcome.get_result())


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail("Debian's chromium is missing: `make install` installs it "
                    "(apt-get install chromium)")
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module", params=BACKENDS)
def served_store(request: pytest.FixtureRequest,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Loom, str]]:
    """(the store's URL, its Loom, the base URL of a live server over it)."""
    folder = tmp_path_factory.mktemp(f"web-{request.param}")
    with store_of(request.param, str(folder / "store")) as url, loomdb.open(url) as lm, \
            serving(create_app(lm)) as base:
        yield url, lm, base


@pytest.fixture(scope="module")
def served(served_store: tuple[str, Loom, str]) -> tuple[Loom, str]:
    return served_store[1], served_store[2]


@pytest.fixture
def name() -> str:
    """A name no other test uses."""
    return f"s{secrets.token_hex(4)}"


def open_page(browser: Any, base: str, request: pytest.FixtureRequest,
              viewport: dict[str, int] | None = None) -> Iterator[Any]:
    """A fresh browser context (its own storage) on `base`, with a screenshot on failure
    and any Content-Security-Policy violation or page error failing the test."""
    from playwright.sync_api import expect

    context = browser.new_context(base_url=base, viewport=viewport or DESKTOP)
    tab = context.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    expect.set_options(timeout=TIMEOUT_MS)
    problems: list[str] = []
    tab.on("console", lambda m: problems.append(m.text)
           if "Content Security Policy" in m.text else None)
    tab.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    try:
        yield tab
        assert problems == [], problems
    finally:
        report = getattr(request.node, "rep_call", None)
        if report is not None and report.failed:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            tab.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
        context.close()


@pytest.fixture
def page(browser: Any, served: tuple[Loom, str], request: pytest.FixtureRequest) -> Iterator[Any]:
    """The app in a fresh tab, on the module's live server."""
    yield from open_page(browser, served[1], request)


@pytest.fixture(params=["desktop", "phone"])
def sized_page(browser: Any, served: tuple[Loom, str],
               request: pytest.FixtureRequest) -> Iterator[Any]:
    """The app in a fresh tab at 1280x900 and, as a second run, at 390x844 (a phone)."""
    yield from open_page(browser, served[1], request,
                         PHONE if request.param == "phone" else DESKTOP)


@pytest.fixture
def model_time(page: Any) -> None:
    """For the tests that wait on the local model (`usefixtures("model_time")`): it
    shares two cores with the rest of the suite, so a first answer (loading the model)
    may take far longer than a page does."""
    from playwright.sync_api import expect

    page.set_default_timeout(MODEL_TIMEOUT_MS)
    expect.set_options(timeout=MODEL_TIMEOUT_MS)


@pytest.fixture(scope="session")
def axe_source() -> str:
    if not AXE.is_file():
        pytest.fail("axe-core is missing: `make install` installs the page's devDependencies "
                    "(npm ci in web/)")
    return AXE.read_text(encoding="utf-8")


@pytest.fixture
def axe(axe_source: str) -> Any:
    """`axe(page)`: axe-core run on what the page shows (injected from node_modules),
    failing on any serious or critical violation (WCAG 2 A and AA rules)."""

    def check(tab: Any) -> None:
        if not tab.evaluate("() => !!window.axe"):
            tab.evaluate(axe_source)
        found = tab.evaluate("""async () => {
          const r = await axe.run(document, { runOnly: { type: "tag",
            values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
            resultTypes: ["violations"] });
          return r.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
            .map((v) => ({ id: v.id, impact: v.impact, help: v.help,
                           nodes: v.nodes.slice(0, 4).map((n) => n.target.join(" ")) }));
        }""")
        assert found == [], f"{tab.url}: {found}"

    return check


@pytest.fixture
def shot(request: pytest.FixtureRequest) -> Any:
    """`shot(page, name)`: a screenshot of what the page shows, kept in
    test-artifacts/web/views/ (what the views look like at each size, to look at)."""

    def take(tab: Any, what: str) -> None:
        folder = ARTIFACTS / "views"
        folder.mkdir(parents=True, exist_ok=True)
        size = tab.viewport_size or DESKTOP
        tab.screenshot(path=str(folder / f"{what}-{size['width']}x{size['height']}.png"))

    return take


@pytest.fixture
def new_page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """Open more tabs, each in its own browser context, on any base URL:
    `new_page(base)`. Each is checked and closed (a screenshot if the test failed) when
    the test ends. (A test module cannot import from this conftest: another folder's
    conftest may hold the name on the path.)"""
    opened: list[Iterator[Any]] = []

    def make(base: str) -> Any:
        tabs = open_page(browser, base, request)
        opened.append(tabs)
        return next(tabs)

    yield make
    for tabs in reversed(opened):
        for _ in tabs:
            pass
