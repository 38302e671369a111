"""Search (`#/search?q=...`): a search box reached from the nav, full text / semantic /
hybrid, filters; each hit shows its snippet and tree and opens the exact branch that
holds it; a message a document or a collection holds links there too; the whole query
is the address, so a reload (or a shared link) shows the same hits."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from live import serving

import loomdb
from loomdb import Loom
from loomdb.server import create_app
from loomdb.users import add_user
from pg import store_of

BACKENDS = [b for b in os.environ.get("LOOMDB_TEST_BACKENDS", "sqlite,postgres").split(",") if b]


@dataclass
class Found:
    tree: str
    title: str
    hit: str  # the message holding the word, on a side branch
    answer: str  # the answer after it, the latest message of its branch
    doc: str
    coll: str


def grow(lm: Loom, word: str) -> Found:
    """A tree whose searched word sits on a side branch (not the session's path), held
    by a document (made from the message) and a collection item, and tagged `later`; a
    document of its own with the word."""
    title = f"Harbour {word}"
    tree, root = lm.new_tree("Where do the boats dock?", session=f"main-{word}", title=title)
    reply = lm.append(root.id, "At the north pier.", role="assistant")
    lm.append(reply.id, "And in winter?", role="user")
    lm.fork(reply.id, f"side-{word}")
    hit = lm.append(f"side-{word}", f"The ferry {word} leaves at nine", role="user")
    answer = lm.append(f"side-{word}", "It does, from pier four.", role="assistant")
    doc, coll = f"notes-{word}", f"reading-{word}"
    lm.documents.from_message(hit.id, doc)
    lm.documents.new(f"plan-{word}", f"A plan about the {word} ferry timetable\n")
    lm.collections.new(coll, "list")
    lm.collections.add(coll, hit.id)
    lm.tag(hit.id, "later")
    return Found(tree.id, title, hit.id, answer.id, doc, coll)


def test_a_hit_shows_its_snippet_tree_and_holders_and_opens_its_branch(
        page: Any, served: tuple[Loom, str], name: str) -> None:
    from playwright.sync_api import expect

    f = grow(served[0], name)
    page.goto("/")
    page.get_by_role("navigation", name="Views").get_by_role("link", name="Search").click()
    box = page.get_by_role("searchbox", name="Search")
    expect(box).to_be_focused()
    # what a screen reader finds: the box, the modes, the filters by name
    expect(page.get_by_role("search", name="Search everything")).to_match_aria_snapshot("""
      - searchbox "Search"
      - button "Search"
      - group "Mode":
        - radio "Full text" [checked]
        - radio "Semantic"
        - radio "Hybrid"
      - combobox "Tree"
      - combobox "Role"
      - textbox "Author"
      - textbox "Tag"
      - combobox "Kind"
    """)
    box.fill(f"ferry {name}")
    box.press("Enter")
    expect(page).to_have_url(re.compile(rf"#/search\?q=ferry\+{name}$"))
    results = page.get_by_role("list", name="Results")
    # the message (in its tree) and the document made from it both hold the words
    both = results.get_by_role("listitem").filter(has_text=f"ferry {name} leaves at nine")
    expect(both).to_have_count(2)
    hit = both.filter(has=page.get_by_role("link", name=f.title))
    expect(hit).to_contain_text("Message")
    expect(both.filter(has_not=page.get_by_role("link", name=f.title))).to_contain_text(
        f"notes-{name}")  # the document hit names its document
    expect(hit.get_by_text("In:")).to_be_visible()
    expect(hit.get_by_role("link", name=f"Document {f.doc}")).to_be_visible()
    expect(hit.get_by_role("link", name=f"Collection {f.coll}")).to_be_visible()
    # the matched word is marked
    expect(hit.locator("mark").filter(has_text=name)).to_be_visible()
    page.screenshot(path="/tmp/areasweb-search.png", full_page=True)
    hit.get_by_role("link", name=re.compile("leaves at nine")).click()
    expect(page).to_have_url(re.compile(rf"#/thread/{f.answer}\?at={f.hit}$"))


def test_a_hit_says_role_date_and_side_branch_and_opens_through_to_the_answer(
        sized_page: Any, served: tuple[Loom, str], name: str, axe: Any, shot: Any) -> None:
    """Each message hit shows its role, its date and "on a side branch" when it is off
    the main line; the hit opens its branch through it down to the latest message (the
    answer shown, not folded behind "Show what follows"), scrolled to the hit; the
    navigation's Tree map then opens this tree's map at that branch."""
    from playwright.sync_api import expect

    page = sized_page
    f = grow(served[0], name)
    page.goto(f"/#/search?q=ferry+{name}&kind=message")
    hit = page.get_by_role("list", name="Results").get_by_role("listitem")
    expect(hit).to_have_count(1)
    expect(hit).to_contain_text("user")
    expect(hit.get_by_text("on a side branch")).to_be_visible()
    day = served[0].node(f.hit).created_at
    expect(hit.locator("time")).to_have_attribute("datetime", day)
    expect(hit.locator("time")).to_contain_text("today")
    page.goto(f"/#/search?q=boats+{name}&kind=message")
    expect(hit.get_by_text("on a side branch")).to_have_count(0)  # the root: the main line
    page.goto(f"/#/search?q=ferry+{name}&kind=message")
    axe(page)
    shot(page, "search-hit-explained")
    hit.get_by_role("link", name=re.compile("leaves at nine")).click()
    expect(page).to_have_url(re.compile(rf"#/thread/{f.answer}\?at={f.hit}$"))
    thread = page.get_by_role("list", name="Messages")
    expect(thread.get_by_role("article").filter(has_text="from pier four")).to_be_visible()
    expect(page.get_by_role("button", name="Show what follows")).to_have_count(0)
    expect(thread.get_by_role("article").filter(has_text="leaves at nine")).to_be_in_viewport()
    nav = page.get_by_role("navigation", name="Views")
    if page.viewport_size["width"] < 500:
        page.get_by_role("button", name="Menu").click()
    nav.get_by_role("link", name="Tree map").click()
    expect(page).to_have_url(re.compile(rf"#/treemap/{f.tree}\?at={f.answer}$"))
    expect(page.get_by_text("choose a tree")).to_have_count(0)
    page.goto("/#/trees")  # away from any tree the map asks which
    expect(page.locator("nav#views").get_by_role("link", name="Tree map", include_hidden=True)
           ).to_have_attribute("href", "#/treemap")


def test_brackets_in_content_stay_text_and_only_the_match_is_marked(
        page: Any, served: tuple[Loom, str], name: str) -> None:
    from playwright.sync_api import expect

    served[0].new_tree(f"def parse(x: Dict[str, Any]) -> [{name}] <b>not bold</b>",
                       session=f"code-{name}")
    page.goto(f"/#/search?q={name}")
    hit = page.get_by_role("list", name="Results").get_by_role("listitem")
    # (PostgreSQL's headline drops tag-like words; SQLite keeps them: as text either way)
    expect(hit.get_by_role("link").first).to_contain_text(f"Dict[str, Any]) -> [{name}]")
    expect(hit.locator("mark")).to_have_text([name])
    expect(hit.locator("b")).to_have_count(0)


def _pending(answer: int) -> Any:
    """What a server with background embedding adds to a semantic answer (`pending`):
    the page's own search answer, passed through with that field set."""
    import json

    def handle(route: Any) -> None:
        got = route.fetch()
        body = got.json()
        body["pending"] = answer
        route.fulfill(response=got, body=json.dumps(body))

    return handle


def test_semantic_hits_say_how_much_is_still_embedding(
        page: Any, served: tuple[Loom, str], name: str, shot: Any) -> None:
    """A semantic answer with `pending` entries: the page shows the hits at once and the
    embedding count from the status route, followed until nothing waits; with no status
    route it says only how many wait, and no error."""
    from playwright.sync_api import expect

    grow(served[0], name)
    page.route(re.compile(r"/api/search\?"), _pending(1234))
    # a server without the status route (an older one): the count from the answer,
    # nothing else
    page.route("**/api/search/status", lambda route: route.fulfill(
        status=404, json={"error": {"type": "NotFound", "message": "no such route"}}))
    page.goto(f"/#/search?q=ferry+{name}")
    expect(page.get_by_role("list", name="Results").get_by_role("listitem")).not_to_have_count(0)
    status = page.get_by_role("status", name="Embedding")
    expect(status).to_contain_text("1,234 entries are not embedded yet")
    expect(page.get_by_role("alert")).to_have_count(0)
    # a server with it: embedded of total, then done
    answers = iter([{"embedded": 10, "total": 1244, "pending": 1234},
                    {"embedded": 1244, "total": 1244, "pending": 0}])
    page.clock.install()
    page.unroute("**/api/search/status")
    page.route("**/api/search/status", lambda route: route.fulfill(json=next(answers)))
    page.goto(f"/#/search?q=ferry+{name}&limit=21")
    expect(status).to_contain_text("Embedding 10 of 1,244 entries (1,234 to go)")
    shot(page, "search-embedding")
    page.clock.run_for(3100)
    expect(status).to_contain_text("Every entry is embedded now")
    page.unroute_all()
    page.goto(f"/#/search?q=ferry+{name}&limit=22")  # no pending: nothing said
    expect(page.get_by_role("list", name="Results").get_by_role("listitem")).not_to_have_count(0)
    expect(status).to_have_count(0)


def test_the_query_is_the_address_and_filters_narrow_it(
        page: Any, served: tuple[Loom, str], name: str) -> None:
    from playwright.sync_api import expect

    f = grow(served[0], name)
    page.goto(f"/#/search?q={name}")
    results = page.get_by_role("list", name="Results")
    expect(results.get_by_role("listitem")).to_have_count(3)  # message, document, item
    # kind: documents only (both the document from the message and the plan)
    page.get_by_label("Kind").select_option("document")
    page.get_by_role("button", name="Search").click()
    expect(page).to_have_url(re.compile(rf"q={name}&kind=document$"))
    expect(results.get_by_role("listitem")).to_have_count(2)
    plan = results.get_by_role("link", name=re.compile("timetable"))
    expect(plan).to_have_attribute("href", re.compile(rf"^#/documents/plan-{name}\?rev="))
    # a reload keeps the query, its filters and its hits
    page.reload()
    expect(page.get_by_role("searchbox", name="Search")).to_have_value(name)
    expect(page.get_by_label("Kind")).to_have_value("document")
    expect(results.get_by_role("listitem")).to_have_count(2)
    # role and tree filters
    page.goto(f"/#/search?q={name}&role=assistant")
    expect(page.get_by_role("status").filter(has_text="No hits")).to_be_visible()
    page.goto(f"/#/search?q={name}&tree={quote(f.tree)}")
    expect(page.get_by_label("Tree")).to_have_value(f.tree)
    expect(results.get_by_role("listitem")).to_have_count(1)
    # a tag: the message tagged `later`, which links to the collection holding it
    page.goto(f"/#/search?q={name}&tag=later")
    expect(results.get_by_role("listitem")).to_have_count(1)
    expect(results.get_by_role("listitem").get_by_role("link", name=f"Collection {f.coll}")
           ).to_have_attribute("href", re.compile(rf"^#/collections/{f.coll}\?item="))


def test_hybrid_is_chosen_in_the_page_and_kept_in_the_address(
        page: Any, served: tuple[Loom, str], name: str) -> None:
    from playwright.sync_api import expect

    f = grow(served[0], name)
    page.goto("/#/search")
    page.get_by_role("searchbox", name="Search").fill(f"ferry {name}")
    page.get_by_role("radio", name="Hybrid").check()
    page.get_by_role("button", name="Search").click()
    expect(page).to_have_url(re.compile(r"&mode=hybrid$"))
    hit = page.get_by_role("list", name="Results").get_by_role("listitem").filter(
        has=page.get_by_role("link", name=f.title))
    expect(hit.get_by_role("link", name=re.compile(f"{name} leaves at nine"))).to_have_attribute(
        "href", f"#/thread/{f.answer}?at={f.hit}")
    page.reload()
    expect(page.get_by_role("radio", name="Hybrid")).to_be_checked()


def test_semantic_without_its_model_shows_the_refusal(
        page: Any, served: tuple[Loom, str], name: str, monkeypatch: Any) -> None:
    from playwright.sync_api import expect

    from loomdb.errors import MissingExtra
    from loomdb.search import service

    def missing(*_: Any) -> Any:
        raise MissingExtra("semantic search", "semantic")

    monkeypatch.setattr(service, "_semantic", missing)
    page.goto("/#/search?q=ferry&mode=semantic")
    expect(page.get_by_role("alert")).to_contain_text("semantic")
    expect(page.get_by_role("list", name="Results")).to_have_count(0)
    expect(page.get_by_role("searchbox", name="Search")).to_have_value("ferry")


def test_full_text_hits_show_while_a_search_by_meaning_runs(
        page: Any, served: tuple[Loom, str], name: str, monkeypatch: Any) -> None:
    """A semantic query that takes its time (a first one may wait on the model): the
    full-text hits are on the page meanwhile, said to be interim; its own answer (here
    a refusal) replaces them."""
    import threading

    from playwright.sync_api import expect

    from loomdb.errors import MissingExtra
    from loomdb.search import service

    grow(served[0], name)
    release = threading.Event()

    def slow(*_: Any) -> Any:
        release.wait(30)  # until the test has seen the interim hits
        raise MissingExtra("semantic search", "semantic")

    monkeypatch.setattr(service, "_semantic", slow)
    page.goto(f"/#/search?q=ferry+{name}&mode=semantic")
    results = page.get_by_role("list", name="Results").get_by_role("listitem")
    try:
        expect(results).to_have_count(3)  # the message and two documents, by their words
        expect(page.get_by_role("status").filter(has_text="while the search by meaning runs")
               ).to_be_visible()
    finally:
        release.set()
    expect(page.get_by_role("alert")).to_contain_text("semantic")
    expect(results).to_have_count(0)


def test_a_query_without_words_is_refused_in_the_page(page: Any, served: Any) -> None:
    from playwright.sync_api import expect

    page.goto("/#/search?q=%21%21%21")
    expect(page.get_by_role("alert")).to_contain_text("no words")


def test_more_hits_are_asked_for_and_kept_in_the_address(
        page: Any, served: tuple[Loom, str], name: str) -> None:
    from playwright.sync_api import expect

    lm = served[0]
    lm.new_tree(f"Count {name} one", session=f"count-{name}")
    for i in range(24):
        lm.append(f"count-{name}", f"Count {name} again, number {i}", role="user")
    page.goto(f"/#/search?q={name}")
    results = page.get_by_role("list", name="Results").get_by_role("listitem")
    expect(results).to_have_count(20)
    page.get_by_role("button", name="More hits").click()
    expect(page).to_have_url(re.compile(r"&limit=40$"))
    expect(results).to_have_count(25)
    expect(page.get_by_role("button", name="More hits")).to_have_count(0)
    page.reload()
    expect(results).to_have_count(25)


@pytest.fixture(params=BACKENDS)
def users_store(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[tuple[Loom, str]]:
    """A store with users, served (its own: the module's store has none)."""
    with store_of(request.param, str(tmp_path / "store")) as url, loomdb.open(url) as lm, \
            serving(create_app(lm)) as base:
        yield lm, base


def test_each_user_finds_and_opens_only_their_own(
        new_page: Any, users_store: tuple[Loom, str]) -> None:
    """Signed in, search, documents and collections show the user's own things; another
    user's document or collection answers as unknown."""
    from playwright.sync_api import expect

    lm, base = users_store
    tokens = {who: add_user(lm, who)[1] for who in ("ann", "bob")}
    ann = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {tokens['ann']}"})
    made = ann.post("/api/trees", json={"text": "The albatross nests on cliffs",
                                        "session": "birds"}).json()
    assert ann.post("/api/documents", json={"name": "field-notes",
                                            "text": "albatross counts\n"}).status_code == 201
    assert ann.post("/api/collections", json={"name": "sightings"}).status_code == 201
    assert ann.post("/api/collections/sightings/items",
                    json={"entity": made["node"]}).status_code == 201
    for who, sees in (("bob", False), ("ann", True)):
        tab = new_page(base)
        tab.goto("/")
        tab.get_by_role("form", name="Sign in").get_by_label("Token").fill(tokens[who])
        tab.get_by_role("button", name="Sign in").click()
        expect(tab.get_by_role("button", name="Sign out")).to_be_visible()
        tab.goto("/#/search?q=albatross")
        results = tab.get_by_role("list", name="Results").get_by_role("listitem")
        if sees:
            expect(results).to_have_count(2)  # the message and the document
            expect(results.filter(has_text="nests on cliffs").get_by_role(
                "link", name="Collection sightings")).to_be_visible()
        else:
            expect(tab.get_by_role("status").filter(has_text="No hits")).to_be_visible()
        tab.goto("/#/documents")
        expect(tab.get_by_role("list", name="Documents").get_by_role(
            "link", name="field-notes")).to_have_count(1 if sees else 0)
        tab.goto("/#/documents/field-notes")
        if sees:
            expect(tab.get_by_role("region", name="Content")).to_contain_text("albatross")
        else:
            expect(tab.get_by_role("alert")).to_have_text("unknown document: 'field-notes'")
        tab.goto("/#/collections/sightings")
        if sees:
            expect(tab.get_by_role("list", name="Items").get_by_role("listitem")).to_have_count(1)
        else:
            expect(tab.get_by_role("alert")).to_have_text("unknown collection: 'sightings'")


def test_the_search_request_refuses_what_is_too_long(served: tuple[Loom, str]) -> None:
    base = served[1]
    for params in ({"q": "w " * 501}, {"q": "word", "tag": "t" * 1001},
                   {"q": "word", "tree": "t" * 1001}):
        r = httpx.get(f"{base}/api/search", params=params)
        assert r.status_code == 422, r.text
    assert httpx.get(f"{base}/api/search", params={"q": "w " * 499}).status_code == 200
