"""The agents' inbox on a store with users, in Chromium over each backend: each user,
signed in with their token, sees and decides only the calls waiting on their own
trees; messages and personas are the operator's, and the page says so."""

from __future__ import annotations

from typing import Any

import pytest
from agent_calls import Tally, pause, tally_world

from loomdb import Loom
from loomdb.users import add_user

pytestmark = [pytest.mark.xdist_group("local-model"), pytest.mark.slow]


world = tally_world("inbox-users")


@pytest.fixture
def tab(new_page: Any, world: tuple[str, Loom, str, Tally]) -> Any:
    return new_page(world[2])


def sign_in(page: Any, token: str) -> None:
    from playwright.sync_api import expect

    page.goto("/#/inbox")
    form = page.get_by_role("form", name="Sign in")
    form.get_by_label("Token").fill(token)
    form.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()


def test_each_user_sees_and_decides_only_their_own_calls(
        tab: Any, world: tuple[str, Loom, str, Tally], name: str) -> None:
    from playwright.sync_api import expect

    _, lm, _, tally = world
    (ann, ann_token), (bob, bob_token) = add_user(lm, f"ann-{name}"), add_user(lm, f"bob-{name}")
    pause(lm, tally, f"{name}-ann", owner=ann)
    pause(lm, tally, f"{name}-bob", owner=bob)
    sign_in(tab, bob_token)
    calls = tab.get_by_role("article", name="Call tally in " + name, exact=False)
    expect(tab.get_by_role("article", name=f"Call tally in {name}-bob")).to_be_visible()
    expect(calls).to_have_count(1)
    expect(tab.get_by_text("Messages between sessions are the store operator's")).to_be_visible()
    expect(tab.get_by_text("Personas are the store operator's settings.")).to_be_visible()

    tab.get_by_role("button", name="Sign out").click()
    sign_in(tab, ann_token)
    mine = tab.get_by_role("article", name=f"Call tally in {name}-ann")
    expect(mine).to_be_visible()
    expect(calls).to_have_count(1)
    before = tally.runs()
    mine.get_by_role("button", name="Approve", exact=True).click()
    expect(tab.get_by_role("region", name="Turn").get_by_role("listitem")).to_have_count(2)
    expect(mine).to_have_count(0)
    assert tally.runs() == before + 1
    assert [p.session for p in lm.agents.pending()] == [f"{name}-bob"]
