"""Share links and live updates in the browser (issue 24, points 9 and 12): the Share
view makes a snapshot or a live link, copies it, lists and revokes links; a reader of
the link (another browser, no token) reads the branch without a single write control;
a tree open in two browsers shows what the other wrote without a reload.

Every wait is Playwright's `expect` on what the user sees, never a duration."""

from __future__ import annotations

import re
import time
from typing import Any

import httpx
import pytest

from loomdb import Loom


@pytest.fixture
def other(new_page: Any, served: tuple[Loom, str]) -> Any:
    """A second browser (its own context: its own storage, no token)."""
    return new_page(served[1])


@pytest.fixture
def third(new_page: Any, served: tuple[Loom, str]) -> Any:
    return new_page(served[1])


def test_the_share_view_makes_copies_lists_and_revokes(page: Any, other: Any,
                                                        served: tuple[Loom, str],
                                                        name: str) -> None:
    from playwright.sync_api import expect

    lm, _ = served
    _, root = lm.new_tree("Where to in May?", session=name)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(f"/#/share/{root.id}?session={name}")
    page.get_by_role("button", name="Share live").click()
    made = page.get_by_role("group", name="New link").get_by_role("textbox", name="Link")
    expect(made).to_have_value(re.compile(r"^http://127\.0\.0\.1:\d+/s/[A-Za-z0-9_-]{43}$"))
    url = made.input_value()
    page.get_by_role("button", name="Copy link").click()
    expect(page.get_by_role("button", name="Copied")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == url
    token = url.rsplit("/", 1)[1]
    row = page.get_by_role("row").filter(has_text=f"/s/{token[:6]}…")
    expect(row).to_contain_text("live")
    expect(row).to_contain_text(name)

    other.goto(url)  # the reader: no token, no navigation, nothing to write with
    expect(other.get_by_role("status").filter(has_text="Read-only shared link")).to_be_visible()
    expect(other.get_by_role("navigation", name="Views")).to_have_count(0)
    expect(other.get_by_role("textbox")).to_have_count(0)

    page.get_by_role("button", name=f"Revoke link {token[:6]}…").click()
    expect(row).to_have_count(0)
    expect(page.get_by_role("status").filter(has_text="revoked")).to_be_visible()
    gone = other.goto(url)
    assert gone is not None and gone.status == 404


def test_a_snapshot_link_from_the_share_view(page: Any, served: tuple[Loom, str],
                                             name: str) -> None:
    from playwright.sync_api import expect

    lm, _ = served
    _, root = lm.new_tree("Snapshots stay", session=name)
    page.goto(f"/#/share/{root.id}")
    page.get_by_role("button", name="Share snapshot").click()
    expect(page.get_by_role("textbox", name="Link")).to_have_value(re.compile(r"/s/"))
    row = page.get_by_role("row").filter(has_text=root.id[:12])
    expect(row).to_contain_text("snapshot")


def test_a_link_that_allows_continuing_is_continued(page: Any, other: Any,
                                                  served: tuple[Loom, str], name: str,
                                                  axe: Any) -> None:
    """Made with "Let a signed-in reader continue it": the link's page has Continue,
    which makes the reader's own tree (here the store's operator: no users) and opens
    it; a link made without it has no Continue."""
    from playwright.sync_api import expect

    lm, _ = served
    _, root = lm.new_tree("Where to in June?", session=name)
    lm.append(name, "Try the coast.", role="assistant")
    page.goto(f"/#/share/{root.id}?session={name}")
    page.get_by_label("Let a signed-in reader continue it").check()
    page.get_by_role("button", name="Share live").click()
    url = page.get_by_role("group", name="New link").get_by_role("textbox", name="Link").input_value()
    other.goto(url)
    expect(other.get_by_role("article", name="assistant message 2")).to_contain_text("Try the coast.")
    # the header says the link can be continued, not that it is read-only
    expect(other.get_by_role("status").filter(has_text="can continue it")).to_be_visible()
    expect(other.get_by_text("Read-only shared link")).to_have_count(0)
    other.get_by_role("button", name="Continue").click()
    form = other.get_by_role("form", name="Continue in your own space")
    form.get_by_label("New session name").fill(f"{name}-mine")
    form.get_by_label("Your next message").fill("Which coast?")
    axe(other)
    form.get_by_role("button", name="Continue here").click()
    expect(other).to_have_url(re.compile(rf"/#/thread/{name}-mine$"))
    expect(other.get_by_role("list", name="Messages")).to_contain_text("Which coast?")
    fork = lm.tree(lm.ref(f"{name}-mine").tree)
    assert fork.lineage["shared"]["node"] == lm.ref(name).node
    # a read-only link: no Continue
    page.get_by_label("Let a signed-in reader continue it").uncheck()
    page.get_by_role("button", name="Share snapshot").click()
    expect(page.get_by_role("textbox", name="Link")).not_to_have_value(url)
    other.goto(page.get_by_role("textbox", name="Link").input_value())
    expect(other.get_by_role("article", name="user message 1")).to_be_visible()
    expect(other.get_by_role("button", name="Continue")).to_have_count(0)
    expect(other.get_by_role("status").filter(has_text="Read-only shared link")).to_be_visible()


def test_the_tree_map_shows_what_another_browser_wrote(page: Any, other: Any,
                                                       served: tuple[Loom, str],
                                                       name: str) -> None:
    """Two browsers on one tree: what the second writes (through the API, as its page
    does), and a message added by the library, appear on the first one's map without
    a reload, with the moved and new sessions."""
    from playwright.sync_api import expect

    lm, _ = served
    tree, root = lm.new_tree("Live map", session=name, title=f"Live {name}")
    page.goto(f"/#/treemap/{tree.id}")
    board = page.get_by_role("region", name="Tree map").get_by_role("application")
    expect(board).to_have_attribute("aria-label", f"Live {name}: 1 messages")
    page.evaluate("window.__same_page = true")

    other.goto("/#/trees")
    status = other.evaluate("""async ([at, session]) => {
        const r = await fetch(`/api/nodes/${at}/append`, {method: "POST",
          headers: {"Content-Type": "application/json"},
          body: JSON.stringify({text: "from the other browser", role: "assistant"})});
        const made = await r.json();
        const s = await fetch("/api/refs", {method: "POST",
          headers: {"Content-Type": "application/json"},
          body: JSON.stringify({name: session + "-b", kind: "session", at: made.node})});
        return [r.status, s.status];
    }""", [name, name])
    assert status == [201, 201]
    expect(board).to_have_attribute("aria-label", f"Live {name}: 2 messages")
    expect(page.get_by_role("button", name=f"session {name}-b")).to_be_visible()

    lm.append(root.id, "from the library", role="assistant")
    expect(board).to_have_attribute("aria-label", f"Live {name}: 3 messages")
    assert page.evaluate("window.__same_page") is True  # never reloaded


def messages(page: Any) -> Any:
    return page.get_by_role("list", name="Messages").get_by_role("article")


def test_a_live_reader_sees_the_owners_new_message_and_a_snapshot_stays(
        page: Any, other: Any, third: Any, served: tuple[Loom, str], name: str) -> None:
    """The owner writes in the thread view; the reader of a live link sees the new
    message arrive, the reader of a snapshot link keeps the branch as it was."""
    from playwright.sync_api import expect

    lm, _ = served
    lm.new_tree("Shall we picnic?", session=name)
    lm.append(name, "Yes, by the river.", role="assistant")
    _, live = lm.shares.create(name, live=True)
    _, snap = lm.shares.create(name)
    other.goto(f"/s/{live}")
    expect(messages(other)).to_have_count(2)
    still = third
    still.goto(f"/s/{snap}")
    expect(messages(still)).to_have_count(2)

    page.goto(f"/#/thread/{name}")
    expect(messages(page)).to_have_count(2)
    page.get_by_role("textbox", name="Message").fill("Bring a blanket?")
    page.get_by_text("More options").click()
    page.get_by_role("button", name="Add without an answer").click()
    expect(messages(page)).to_have_count(3)
    expect(messages(other)).to_have_count(3)
    expect(messages(other).nth(2)).to_contain_text("Bring a blanket?")
    expect(other.get_by_role("button", name="Send")).to_have_count(0)
    still.reload()
    expect(messages(still)).to_have_count(2)
    expect(still.get_by_text("Bring a blanket?")).to_have_count(0)


def test_one_user_in_two_tabs_sees_the_other_tabs_messages(page: Any, other: Any,
                                                           served: tuple[Loom, str],
                                                           name: str) -> None:
    from playwright.sync_api import expect

    lm, _ = served
    lm.new_tree("Two tabs", session=name)
    page.goto(f"/#/thread/{name}")
    other.goto(f"/#/thread/{name}")
    expect(messages(page)).to_have_count(1)
    expect(messages(other)).to_have_count(1)
    page.evaluate("window.__same_page = true")
    other.get_by_role("textbox", name="Message").fill("Written in the other tab")
    other.get_by_text("More options").click()
    other.get_by_role("button", name="Add without an answer").click()
    expect(messages(page)).to_have_count(2)
    expect(messages(page).nth(1)).to_contain_text("Written in the other tab")
    lm.append(name, "And one from the library", role="assistant")
    expect(messages(page)).to_have_count(3)
    expect(messages(other)).to_have_count(3)
    assert page.evaluate("window.__same_page") is True


def test_the_inbox_shows_a_call_asked_for_elsewhere(page: Any, served: tuple[Loom, str],
                                                    name: str) -> None:
    """A tool call an agent's turn leaves waiting (here: its row, as the turn writes it,
    by the library) appears in an open inbox without a reload, and leaves it once
    decided elsewhere."""
    import json

    from playwright.sync_api import expect

    from loomdb.agents import AGENTS

    lm, _ = served
    lm.new_tree("Check the weather", session=name)
    call = lm.append(name, [{"type": "tool_use", "id": "c1", "name": "weather", "input": {}}],
                     role="assistant")
    page.goto("/#/inbox")
    page.evaluate("window.__same_page = true")
    listed = page.get_by_role("article", name=f"Call weather in {name}")
    expect(listed).to_have_count(0)
    with lm.unit(AGENTS) as db:
        db.execute("INSERT INTO agent_tool_calls (node, call_id, tree, tool, input, state, run, "
                   "created_at, updated_at) VALUES (?, 'c1', ?, 'weather', ?, 'pending', ?, "
                   "'2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
                   (call.id, call.tree, json.dumps([{"id": "c1", "name": "weather", "input": {}}]),
                    json.dumps({"session": name, "persona": None})))
    expect(listed).to_have_count(1)
    with lm.unit(AGENTS) as db:
        db.execute("UPDATE agent_tool_calls SET state = 'denied' WHERE node = ?", (call.id,))
    expect(listed).to_have_count(0)
    assert page.evaluate("window.__same_page") is True


@pytest.fixture(scope="module")
def with_users(served_store: tuple[str, Loom, str]) -> tuple[Loom, str, dict[str, str]]:
    """The module's store, with users ann and bob (from the first test that asks)."""
    from loomdb.users import add_user, list_users

    lm, base = served_store[1], served_store[2]
    assert not list_users(lm)
    tokens = {who: add_user(lm, who)[1] for who in ("ann", "bob")}
    # the server trusts "no users" for a second after it last looked: wait until it
    # asks for a token (a page loaded before that would be the operator's)
    for _ in range(200):
        if httpx.get(f"{base}/api/trees").status_code == 401:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the server never saw the store's users")
    return lm, base, tokens


def sign_in(page: Any, token: str) -> None:
    from playwright.sync_api import expect

    page.goto("/#/trees")
    form = page.get_by_role("form", name="Sign in")
    form.get_by_label("Token").fill(token)
    form.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()


def test_with_users_a_link_is_read_without_an_account_and_follows_live(
        page: Any, other: Any, third: Any, with_users: tuple[Loom, str, dict[str, str]],
        name: str) -> None:
    """On a store with users (these tests run last in the module: from here on every
    request needs a token): ann's two tabs follow her tree with her token, ann shares
    a live link from her thread, and a reader with no account reads it, and sees ann's
    next message; bob's page knows nothing of ann's tree."""
    from playwright.sync_api import expect

    lm, _, tokens = with_users
    sign_in(page, tokens["ann"])
    made = page.evaluate("""async ([token, name]) => {
        const r = await fetch("/api/trees", {method: "POST", headers: {
          "Content-Type": "application/json", Authorization: `Bearer ${token}`},
          body: JSON.stringify({text: "Ann's picnic", session: name})});
        return r.json();
    }""", [tokens["ann"], name])
    page.goto(f"/#/thread/{name}")
    expect(messages(page)).to_have_count(1)
    page.get_by_role("link", name="Share").last.click()
    expect(page).to_have_url(re.compile(r"#/share/"))
    page.get_by_role("button", name="Share live").click()
    url = page.get_by_role("textbox", name="Link").input_value()

    other.goto(url)  # no account
    expect(messages(other)).to_have_count(1)
    sign_in(third, tokens["ann"])  # ann's second tab, on the tree map
    third.goto(f"/#/treemap/{made['tree']}")
    board = third.get_by_role("region", name="Tree map").get_by_role("application")
    expect(board).to_have_attribute("aria-label", re.compile(r": 1 messages$"))

    page.goto(f"/#/thread/{name}")
    page.get_by_role("textbox", name="Message").fill("Strawberries, please")
    page.get_by_text("More options").click()
    page.get_by_role("button", name="Add without an answer").click()
    expect(messages(page)).to_have_count(2)
    expect(messages(other)).to_have_count(2)
    expect(messages(other).nth(1)).to_contain_text("Strawberries, please")
    expect(board).to_have_attribute("aria-label", re.compile(r": 2 messages$"))
    with httpx.Client(base_url=with_users[1]) as h:  # bob cannot follow ann's tree
        bob = {"Authorization": f"Bearer {tokens['bob']}"}
        assert h.get(f"/api/trees/{made['tree']}/events", headers=bob).status_code == 404
        assert h.get(f"/api/trees/{made['tree']}/events").status_code == 401
