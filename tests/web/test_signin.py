"""Signing in, on a store with users (both backends; this module's store is its own:
users are added to it here): a visitor gets a sign-in page; a token is checked with the
server before it is kept, and a refused one is said in words and not kept; the page
says who is signed in and signs out; each user sees only their own trees; a name
another user holds is refused as taken, never naming what holds it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from loomdb import Loom
from loomdb.users import add_user


@pytest.fixture(scope="module")
def tokens(served: tuple[Loom, str]) -> dict[str, str]:
    """Users ann and bob, each with a tree of their own made through the API."""
    lm, base = served
    made = {who: add_user(lm, who)[1] for who in ("ann", "bob")}
    for who, token in made.items():
        answer = httpx.post(f"{base}/api/trees", headers={"Authorization": f"Bearer {token}"},
                            json={"text": f"{who}'s secret plan", "session": f"{who}-s",
                                  "title": f"{who}'s plan"})
        assert answer.status_code == 201, answer.text
    return made


def sign_in(page: Any, token: str, who: str) -> None:
    from playwright.sync_api import expect

    page.goto("/#/trees")
    form = page.get_by_role("form", name="Sign in")
    form.get_by_label("Token").fill(token)
    form.get_by_role("button", name="Sign in").click()
    expect(page.get_by_test_id("signed-in")).to_contain_text(f"Signed in as {who}")


def test_a_visitor_signs_in_and_a_refused_token_is_not_kept(
        sized_page: Any, tokens: dict[str, str], axe: Any, shot: Any) -> None:
    from playwright.sync_api import expect

    page = sized_page
    page.goto("/#/documents")
    expect(page.get_by_role("heading", level=1, name="Sign in")).to_be_visible()
    expect(page).to_have_title("Sign in · loomdb")
    expect(page.get_by_role("navigation", name="Views")).to_have_count(0)
    axe(page)
    shot(page, "signin")
    form = page.get_by_role("form", name="Sign in")
    form.get_by_label("Token").fill("not-a-token")
    form.get_by_role("button", name="Sign in").click()
    expect(form.get_by_role("alert")).to_contain_text("This token is not known here")
    expect(form.get_by_label("Token")).to_have_value("not-a-token")  # the form is kept
    assert page.evaluate("() => localStorage.getItem('loomdb-token')") is None
    form.get_by_label("Token").fill(tokens["ann"])
    form.get_by_role("button", name="Sign in").click()
    expect(page.get_by_test_id("signed-in")).to_contain_text("Signed in as ann")
    expect(page.get_by_role("heading", level=1, name="Documents")).to_be_visible()
    assert page.evaluate("() => localStorage.getItem('loomdb-token')") == tokens["ann"]
    axe(page)
    # a token kept that the server no longer accepts: asked again, in words
    page.evaluate("() => localStorage.setItem('loomdb-token', 'gone-token')")
    page.reload()
    expect(page.get_by_role("alert")).to_contain_text("no longer accepted")
    expect(page.get_by_role("form", name="Sign in")).to_be_visible()


@pytest.mark.parametrize("who,other", [("ann", "bob"), ("bob", "ann")])
def test_each_user_sees_only_their_own_trees(page: Any, tokens: dict[str, str],
                                             who: str, other: str) -> None:
    from playwright.sync_api import expect

    sign_in(page, tokens[who], who)
    forest = page.get_by_role("list", name="Trees by lineage")
    expect(forest.get_by_role("link", name=f"{who}'s plan", exact=True)).to_be_visible()
    expect(forest.get_by_role("link", name=f"{other}'s plan")).to_have_count(0)
    forest.get_by_role("link", name=f"{who}'s plan", exact=True).click()
    expect(page.get_by_role("list", name="Messages")).to_contain_text(f"{who}'s secret plan")
    page.goto(f"/#/thread/{other}-s")
    expect(page.get_by_role("alert")).to_have_text(f"unknown headish: '{other}-s'")
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("form", name="Sign in")).to_be_visible()
    assert page.evaluate("() => localStorage.getItem('loomdb-token')") is None


def test_a_name_another_user_holds_is_taken_and_nothing_more(
        page: Any, tokens: dict[str, str], name: str) -> None:
    from playwright.sync_api import expect

    sign_in(page, tokens["ann"], "ann")
    start = page.get_by_role("form", name="New conversation")
    start.get_by_label("First message").fill("a plan of my own")
    start.get_by_label("Session name").fill("bob-s")
    start.get_by_role("button", name="Start").click()
    expect(start.get_by_role("alert")).to_have_text(
        "session 'bob-s': the name is taken (names are unique in the store); choose another")
    page.goto("/#/thread/ann-s")
    mine = page.get_by_role("list", name="Messages").get_by_role("article").nth(0)
    mine.get_by_role("button", name="More").click()
    mine.get_by_role("button", name="Fork…").click()
    form = mine.get_by_role("form", name="Fork here")
    form.get_by_role("textbox", name="New session name").fill("bob-s")
    form.get_by_role("button", name="Create fork").click()
    expect(form.get_by_role("alert")).to_have_text("That name is already in use: choose another.")
    expect(page.locator("body")).not_to_contain_text("bob's")


def test_a_signed_in_reader_continues_a_shared_branch(sized_page: Any, served: tuple[Loom, str],
                                                     tokens: dict[str, str], axe: Any) -> None:
    """ann's link allows continuing: a visitor is asked to sign in first; bob, signed in,
    continues it as a tree of his own, which ann never sees (at both sizes)."""
    from playwright.sync_api import expect

    page, base = sized_page, served[1]
    made = httpx.post(f"{base}/api/shares", headers={"Authorization": f"Bearer {tokens['ann']}"},
                      json={"headish": "ann-s", "allow_continue": True})
    assert made.status_code == 201, made.text
    link = made.json()["path"]
    page.goto(link)
    expect(page.get_by_role("article", name="user message 1")).to_contain_text("ann's secret plan")
    page.get_by_role("button", name="Continue").click()
    form = page.get_by_role("form", name="Continue in your own space")
    form.get_by_label("New session name").fill("bob-goes-on")
    form.get_by_label("Your next message").fill("What would you add?")
    axe(page)
    form.get_by_role("button", name="Continue here").click()
    expect(form.get_by_role("alert")).to_contain_text("Sign in to continue")
    expect(form.get_by_label("Your next message")).to_have_value("What would you add?")
    shots = Path("/tmp/shots/web-verbs")
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / f"continue-{page.viewport_size['width']}.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]

    sign_in(page, tokens["bob"], "bob")
    page.goto(link)
    page.get_by_role("button", name="Continue").click()
    session = f"bob-goes-on-{page.viewport_size['width']}"
    form.get_by_label("New session name").fill(session)
    form.get_by_label("Your next message").fill("What would you add?")
    form.get_by_role("button", name="Continue here").click()
    expect(page).to_have_url(re.compile(rf"/#/thread/{session}$"))
    expect(page.get_by_test_id("signed-in")).to_contain_text("Signed in as bob")
    expect(page.get_by_role("list", name="Messages")).to_contain_text("What would you add?")
    bob = {"Authorization": f"Bearer {tokens['bob']}"}
    ann = {"Authorization": f"Bearer {tokens['ann']}"}
    mine = httpx.get(f"{base}/api/refs", headers=bob, params={"kind": "session"}).json()
    assert session in [r["name"] for r in mine["refs"]]
    theirs = httpx.get(f"{base}/api/refs", headers=ann, params={"kind": "session"}).json()
    assert session not in [r["name"] for r in theirs["refs"]]
