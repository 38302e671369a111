"""The web app in Debian's Chromium (Playwright) against a real `loomdb serve`, each
measure beside the API alone (the same data fetched by httpx), on both backends.

    python benchmarks/bench_web.py [--runs 5] [--pg ADMIN_URL] [--sqlite-only] [--only NAME]

Measures (each its own function; medians of `--runs`):
  treemap   a 10,000-node tree map: from navigating to `#/treemap/<tree>` to the map
            drawn and answering a zoom (target <= 2 s); beside it the map's one request
            (`GET /api/trees/<tree>/map`, target < 100 ms), its wall time and the
            server's CPU time per request (which, unlike wall time, does not grow with
            the machine's load)
  search    from a search hit to its branch on screen (target <= 300 ms): a hit deep
            in a 2,000-message conversation, on a side branch; the click on the hit to
            its message shown by the thread view; beside it the searches and the thread
            request alone, and the search page from its address to its hits shown
  thread    a 5,000-message thread: from navigating to `#/thread/<session>` to its last
            screen drawn and in view (target <= 1 s); beside it the page's one request
            (`GET /api/nodes/<session>/thread`: the last 100 messages, target <= 100 ms),
            its wall time and the server's CPU time per request
  chat      Enter in the composer to the local model's first token on screen, beside the
            same call through the API (the append, then the generate stream to its
            first token event, by httpx)
  switch    a click on "Next alternative" to the other answer shown, within the
            session (target <= 150 ms); beside it the switch request alone
  outline   a 5,000-node tree's outline beside its thread: a click on "Outline" to every
            line drawn (target <= 500 ms); beside it the tree map's request alone, which
            the outline reads

Build the app first (`make install`, or `npm ci && npm run build` in web/).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench_http import SERVER_PID, cpu_seconds, fresh_pg, server
from rich.console import Console
from rich.table import Table

import loomdb
from helpers import grow_big, long_session  # noqa: E402
from loomdb import Loom
from loomdb.users import USERS

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
TIMEOUT_MS = 60_000
#: a count above zero (the page marks what it drew)
_positive = re.compile(r"^[1-9]")


@contextmanager
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


def ms(seconds: list[float]) -> str:
    return f"{statistics.median(seconds) * 1000:.0f} ms"


# -- the tree map ----------------------------------------------------------------------
def treemap(url: str, runs: int) -> dict[str, str]:
    """A 10,000-node tree map: navigate -> drawn -> a zoom answered; and the API alone."""
    from playwright.sync_api import expect

    with loomdb.open(url) as lm:
        tree = grow_big(lm, 10_000)
    out: dict[str, str] = {}
    with server(url) as base:
        pid = SERVER_PID[0]
        api, cpu = [], []
        with httpx.Client(base_url=base, timeout=60) as c:
            c.get(f"/api/trees/{tree}/map")  # warm: the first read opens the store's pages
            for _ in range(max(runs, 7)):
                c0, t0 = cpu_seconds(pid), time.perf_counter()
                r = c.get(f"/api/trees/{tree}/map")
                api.append(time.perf_counter() - t0)
                cpu.append(cpu_seconds(pid) - c0)
                assert r.status_code == 200 and len(r.json()["nodes"]["id"]) == 10_000
        out["API alone (wall)"] = ms(api)
        out["API alone (server CPU)"] = ms(cpu)
        out["answer size"] = f"{len(r.content) / 1e6:.2f} MB"
        drawn, answered = [], []
        parts: dict[str, list[float]] = {}
        with browser() as b:
            context = b.new_context(base_url=base, viewport={"width": 1400, "height": 900})
            expect.set_options(timeout=TIMEOUT_MS)
            warm = context.new_page()  # the app's assets cached, as on a second visit
            warm.goto("/#/treemap")
            expect(warm.get_by_role("heading", name="Tree map")).to_be_visible()
            warm.close()
            for _ in range(runs):
                page = context.new_page()
                t0 = time.perf_counter()
                page.goto(f"/#/treemap/{tree}")
                canvas = page.get_by_role("region", name="Tree map").locator("canvas")
                expect(canvas).to_have_attribute("data-nodes", "10000")
                expect(canvas).to_have_attribute("data-drawn", _positive)
                drawn.append(time.perf_counter() - t0)
                for part, seconds in page.evaluate(_PARTS).items():
                    parts.setdefault(part, []).append(seconds)
                zoom = canvas.get_attribute("data-zoom")
                page.get_by_role("application").press("+")
                expect(canvas).not_to_have_attribute("data-zoom", zoom or "")
                answered.append(time.perf_counter() - t0)
                page.close()
            context.close()
        out["page: drawn"] = ms(drawn)
        for part, seconds in parts.items():
            out[f"  of which {part}"] = ms(seconds)
        out["page: drawn and a zoom answered"] = ms(answered)
    return out


#: where a page's time went: the app's start (navigation to the map's request), and
#: the map's own marks (see views/treemap/MapView.svelte)
_PARTS = """() => {
    const out = {};
    const fetched = performance.getEntriesByName("treemap:fetch")[0];
    if (fetched) out["app start"] = fetched.startTime / 1000;
    for (const m of performance.getEntriesByType("measure")) {
        if (m.name.startsWith("treemap: ")) out[m.name.slice(9)] = m.duration / 1000;
    }
    return out;
}"""

# -- from a search hit to its branch ---------------------------------------------------
#: the words of the message the search finds (nowhere else in the store)
NEEDLE = "The lighthouse keeper logs a comet at dawn"


def grow_long(lm: Loom, n: int) -> str:
    """A conversation of `n` messages with a side branch forked near its end; the
    needle is that branch's last message (the hit is not on the session's path)."""
    lm.new_tree("Keep a long log", session="long", title="Long log")
    made = []
    with lm.unit(USERS):
        for i in range(n - 1):
            made.append(lm.append("long", f"Entry {i}: nothing unusual on the night watch",
                                  role="user" if i % 2 else "assistant").id)
    lm.fork(made[-10], "side")
    lm.append("side", "Anything else?", role="user")
    return lm.append("side", NEEDLE, role="assistant").id


def search(url: str, runs: int) -> dict[str, str]:
    """A search page from its address to its hits; a hit clicked to its branch shown."""
    from playwright.sync_api import expect

    with loomdb.open(url) as lm:
        hit = grow_long(lm, 2_000)
        analyzed(lm)
    query = "lighthouse comet"
    out: dict[str, str] = {}
    with server(url) as base:
        with httpx.Client(base_url=base, timeout=60) as c:
            c.get("/api/search", params={"q": query})  # warm: indexes what was written
            found, thread = [], []
            for _ in range(max(runs, 7)):
                t0 = time.perf_counter()
                r = c.get("/api/search", params={"q": query})
                found.append(time.perf_counter() - t0)
                assert r.json()["hits"][0]["entity"] == hit
                t0 = time.perf_counter()
                r = c.get(f"/api/nodes/{hit}/thread")
                thread.append(time.perf_counter() - t0)
            out["API alone: search"] = ms(found)
            out["API alone: the hit's thread"] = (ms(thread) if r.status_code == 200
                                                  else f"n/a ({r.status_code})")
        listed, opened = [], []
        with browser() as b:
            context = b.new_context(base_url=base, viewport={"width": 1400, "height": 900})
            expect.set_options(timeout=TIMEOUT_MS)
            warm = context.new_page()
            warm.goto("/#/search")
            expect(warm.get_by_role("searchbox", name="Search")).to_be_visible()
            warm.close()
            for _ in range(runs):
                page = context.new_page()
                t0 = time.perf_counter()
                page.goto(f"/#/search?q={query.replace(' ', '+')}")
                link = page.get_by_role("list", name="Results").get_by_role(
                    "link", name=re.compile("lighthouse"))
                expect(link).to_be_visible()
                listed.append(time.perf_counter() - t0)
                took = page.evaluate(_CLICK_TO_SHOWN, NEEDLE)
                if took is not None:
                    opened.append(took / 1000)
                page.close()
            context.close()
        out["page: search address to hits shown"] = ms(listed)
        out["page: hit clicked to its branch on screen"] = (
            ms(opened) if opened else "n/a (the thread view does not show it)")
    return out


#: in the page (not Playwright's polling, which would round the figure up to its next
#: retry): click the first hit, then look at every frame for the hit's message shown
#: in the viewport by the view the click opened; milliseconds, or null after 10 s
_CLICK_TO_SHOWN = """(needle) => new Promise((resolve) => {
    const link = document.querySelector('ol[aria-label="Results"] a.open');
    const t0 = performance.now();
    link.click();
    const shown = () => [...document.querySelectorAll("main *")].some((e) => {
        if (e.childElementCount || !e.textContent.includes(needle)) return false;
        if (e.closest('ol[aria-label="Results"]')) return false;  // the hit itself
        const r = e.getBoundingClientRect();
        return r.height > 0 && r.bottom > 0 && r.top < innerHeight;
    });
    const check = () => {
        const took = performance.now() - t0;
        if (shown()) resolve(took);
        else if (took > 10000) resolve(null);
        else requestAnimationFrame(check);
    };
    requestAnimationFrame(check);
})"""

# -- the thread -----------------------------------------------------------------------
def analyzed(lm: Loom) -> None:
    """Refresh PostgreSQL's statistics after a bulk load, as autovacuum does soon after
    one (and an import of as many messages does itself: `Backend.settle`): a database
    that has never counted a freshly filled table plans a walk up a path as if it were
    empty (a sequential scan per step: seconds for 5,000 steps)."""
    lm.backend.settle()


def thread(url: str, runs: int) -> dict[str, str]:
    """A 5,000-message thread: navigate -> its last screen drawn and in view; the API alone."""
    from playwright.sync_api import expect

    with loomdb.open(url) as lm:
        session = "long"
        long_session(lm, session, 5_000)
        analyzed(lm)
    out: dict[str, str] = {}
    with server(url) as base:
        pid = SERVER_PID[0]
        api, cpu = [], []
        with httpx.Client(base_url=base, timeout=60) as c:
            c.get(f"/api/nodes/{session}/thread")  # warm, as for the map
            for _ in range(max(runs, 7)):
                c0, t0 = cpu_seconds(pid), time.perf_counter()
                r = c.get(f"/api/nodes/{session}/thread")
                api.append(time.perf_counter() - t0)
                cpu.append(cpu_seconds(pid) - c0)
                data = r.json()
                assert r.status_code == 200 and data["total"] == 5_000 and data["has_more"]
        out["API alone (wall)"] = ms(api)
        out["API alone (server CPU)"] = ms(cpu)
        out["answer size"] = f"{len(r.content) / 1e3:.0f} kB ({len(data['messages'])} messages)"
        shown = []
        parts: dict[str, list[float]] = {}
        with browser() as b:
            context = b.new_context(base_url=base, viewport={"width": 1400, "height": 900})
            expect.set_options(timeout=TIMEOUT_MS)
            warm = context.new_page()
            warm.goto("/#/trees")
            expect(warm.get_by_role("heading", name="Trees")).to_be_visible()
            warm.close()
            for _ in range(runs):
                page = context.new_page()
                t0 = time.perf_counter()
                page.goto(f"/#/thread/{session}")
                region = page.get_by_role("region", name="Thread")
                expect(region).to_have_attribute("data-ready", _positive)
                expect(region.get_by_role("article").last).to_be_in_viewport()
                shown.append(time.perf_counter() - t0)
                for part, seconds in page.evaluate(_THREAD_PARTS).items():
                    parts.setdefault(part, []).append(seconds)
                page.close()
            context.close()
        out["page: last screen shown"] = ms(shown)
        for part, seconds in parts.items():
            out[f"  of which {part}"] = ms(seconds)
    return out


# -- the chat -------------------------------------------------------------------------
def thread_page(b: Any, base: str, session: str) -> tuple[Any, Any]:
    """A tab on the session's thread, drawn: (the page, its Thread region)."""
    from playwright.sync_api import expect

    page = b.new_context(base_url=base).new_page()
    expect.set_options(timeout=TIMEOUT_MS)
    page.goto(f"/#/thread/{session}")
    region = page.get_by_role("region", name="Thread")
    expect(region).to_have_attribute("data-ready", _positive)
    return page, region


# -- the chat -------------------------------------------------------------------------
#: in the page: when Enter went down in the composer, and the frame after the first
#: streamed text appeared (`[data-testid=streaming] .alt`)
_FIRST_TOKEN = """() => {
    const t = { down: null, first: null };
    window.__chat = t;
    document.addEventListener("keydown", (e) => {
        if (e.key === "Enter" && !e.shiftKey && e.target.id === "composer-text") {
            t.down = performance.now(); t.first = null;
        }
    }, true);
    new MutationObserver(() => {
        const alt = document.querySelector('[data-testid="streaming"] .alt');
        if (t.down !== null && t.first === null && alt && alt.textContent.trim())
            requestAnimationFrame(() => { if (t.first === null) t.first = performance.now(); });
    }).observe(document.body, { childList: true, subtree: true, characterData: true });
}"""


def chat(url: str, runs: int) -> dict[str, str]:
    """Enter -> the local model's first token shown; the API's append + stream alone."""
    from playwright.sync_api import expect

    with loomdb.open(url) as lm:
        lm.new_tree("You answer in one word.", session="chat", role="system")
        lm.append("chat", "Hello.", role="user")
        lm.generate("chat", models=["local"], max_tokens=2)
    out: dict[str, str] = {}
    with server(url) as base:
        api = []
        with httpx.Client(base_url=base, timeout=120) as c:
            body = {"max_tokens": 4, "stream": True, "models": ["local"]}
            c.post("/api/nodes/chat/generate", json={**body, "stream": False})  # loads it
            for _ in range(runs):
                t0 = time.perf_counter()
                c.post("/api/nodes/chat/append", json={"role": "user", "text": "Hi."})
                first = None
                with c.stream("POST", "/api/nodes/chat/generate", json=body) as r:
                    for line in r.iter_lines():  # to its end: the answer is stored
                        if first is None and line.startswith("event: token"):
                            first = time.perf_counter() - t0
                assert first is not None
                api.append(first)
        out["API: append, then the stream to its first token"] = ms(api)
        page_times = []
        with browser() as b:
            page, region = thread_page(b, base, "chat")
            page.evaluate(_FIRST_TOKEN)
            page.get_by_text("More options").click()
            page.get_by_role("spinbutton", name="Max tokens").fill("4")
            box = page.get_by_role("textbox", name="Message")
            shown = region.get_by_role("article")
            for _ in range(runs):
                before = shown.count()
                box.fill("Hi.")
                box.press("Enter")
                page.wait_for_function("() => window.__chat.first !== null")
                expect(shown).to_have_count(before + 2)  # the answer stored and shown
                times = page.evaluate("() => window.__chat")
                page_times.append((times["first"] - times["down"]) / 1000)
        out["page: Enter to the first token shown"] = ms(page_times)
    return out


# -- switching an alternative ----------------------------------------------------------
#: in the page: the click on "Next alternative" and the frame after the message shows `want`
_SWITCHED = """(want) => {
    const t = { click: null, shown: null };
    window.__switch = t;
    document.addEventListener("click", (e) => {
        if (e.target.closest('[aria-label="Next alternative"]')) t.click = performance.now();
    }, true);
    const seen = new MutationObserver(() => {
        const last = [...document.querySelectorAll('article[data-testid="message"]')].at(-1);
        if (t.click !== null && t.shown === null && last && last.textContent.includes(want)) {
            seen.disconnect();
            requestAnimationFrame(() => { t.shown = performance.now(); });
        }
    });
    seen.observe(document.body, { childList: true, subtree: true, characterData: true });
}"""


def switch(url: str, runs: int) -> dict[str, str]:
    """A click on "Next alternative" -> the other answer shown, in the session; the API alone."""
    from playwright.sync_api import expect

    with loomdb.open(url) as lm:
        long_session(lm, "alts", 200)
        last = lm.path("alts")[-1]
        parent = lm.node(last).parent
        assert parent is not None
        answers = [last, lm.append(parent, "Another answer.", role="assistant").id]
        texts = [lm.node(last).content[0]["text"], "Another answer."]
        analyzed(lm)
    out: dict[str, str] = {}
    with server(url) as base:
        api = []
        with httpx.Client(base_url=base, timeout=60) as c:
            for k in range(max(runs, 7)):
                t0 = time.perf_counter()
                r = c.post("/api/refs/alts/switch", json={"node": answers[(k + 1) % 2]})
                api.append(time.perf_counter() - t0)
                assert r.status_code == 200, r.text
            c.post("/api/refs/alts/switch", json={"node": answers[0]})
        out["API: the switch request alone"] = ms(api)
        shown = []
        with browser() as b:
            page, region = thread_page(b, base, "alts")
            for k in range(runs):
                want = texts[(k + 1) % 2]
                page.evaluate(_SWITCHED, want)
                last = region.get_by_role("article").last
                last.get_by_role("button", name="Next alternative").click()
                expect(last).to_contain_text(want)
                page.wait_for_function("() => window.__switch.shown !== null")
                t = page.evaluate("() => window.__switch")
                shown.append((t["shown"] - t["click"]) / 1000)
        out["page: click to the other answer shown (target <= 150 ms)"] = ms(shown)
    return out


def outline(url: str, runs: int) -> dict[str, str]:
    """A click on "Outline" -> the whole outline of a 5,000-node tree drawn; the API alone."""
    from playwright.sync_api import expect

    with loomdb.open(url) as lm:
        tree = grow_big(lm, 5_000)
        analyzed(lm)
    out: dict[str, str] = {}
    with server(url) as base:
        api = []
        with httpx.Client(base_url=base, timeout=60) as c:
            c.get(f"/api/trees/{tree}/map?at=big")  # warm, as for the map
            for _ in range(max(runs, 7)):
                t0 = time.perf_counter()
                r = c.get(f"/api/trees/{tree}/map?at=big")
                api.append(time.perf_counter() - t0)
                assert r.status_code == 200 and len(r.json()["nodes"]["id"]) == 5_000
        out["API: the tree map request alone"] = ms(api)
        shown, lines = [], ""
        with browser() as b:
            page, region = thread_page(b, base, "big")
            button = region.get_by_role("button", name="Outline")
            nav = page.get_by_role("navigation", name="Tree outline")
            parts: dict[str, list[float]] = {}
            for _ in range(runs):
                # (clicked where it is: a pointer's click would scroll the page to the
                # header first, and the thread would read its older pages meanwhile)
                t0 = time.perf_counter()
                button.evaluate("b => b.click()")
                expect(nav).to_have_attribute("data-lines", _positive)
                page.wait_for_function(_OUTLINE_DRAWN)
                shown.append(time.perf_counter() - t0)
                for part, seconds in page.evaluate(_OUTLINE_PARTS).items():
                    parts.setdefault(part, []).append(seconds)
                lines = nav.get_attribute("data-lines") or ""
                button.evaluate("b => b.click()")
                expect(nav).to_have_count(0)
                page.evaluate("performance.clearMeasures()")
        out["page: click to the whole outline drawn (target <= 500 ms)"] = ms(shown)
        for part, seconds in parts.items():
            out[f"  of which {part}"] = ms(seconds)
        out["lines drawn (edits fold into their message)"] = lines
    return out


#: the outline's own marks (views/thread/Outline.svelte): its request, and drawn
_OUTLINE_DRAWN = "() => performance.getEntriesByName('outline: drawn').length > 0"
_OUTLINE_PARTS = """() => Object.fromEntries(performance.getEntriesByType("measure")
    .filter((m) => m.name.startsWith("outline: ")).map((m) => [m.name.slice(9), m.duration / 1000]))"""


#: the app's start (navigation to the thread's request) and the view's own marks
#: (see views/Thread.svelte)
_THREAD_PARTS = """() => {
    const out = {};
    const fetched = performance.getEntriesByName("thread:fetch")[0];
    if (fetched) out["app start"] = fetched.startTime / 1000;
    for (const m of performance.getEntriesByType("measure")) {
        if (m.name.startsWith("thread: ")) out[m.name.slice(8)] = m.duration / 1000;
    }
    return out;
}"""

MEASURES: dict[str, Callable[[str, int], dict[str, str]]] = {
    "treemap": treemap, "search": search, "thread": thread, "chat": chat, "switch": switch,
    "outline": outline}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--sqlite-only", action="store_true")
    parser.add_argument("--only", choices=sorted(MEASURES), action="append")
    args = parser.parse_args()
    console = Console()
    for name in args.only or list(MEASURES):
        table = Table(title=f"{name} (medians of {args.runs})")
        table.add_column("measure")
        results: dict[str, dict[str, str]] = {}
        with tempfile.TemporaryDirectory() as tmp:
            results["sqlite"] = MEASURES[name](str(Path(tmp) / "store"), args.runs)
        if not args.sqlite_only:
            with fresh_pg(args.pg) as url:
                results["postgres"] = MEASURES[name](url, args.runs)
        for backend in results:
            table.add_column(backend, justify="right")
        for row in next(iter(results.values())):
            table.add_row(row, *(results[b][row] for b in results))
        console.print(table)


if __name__ == "__main__":
    main()
