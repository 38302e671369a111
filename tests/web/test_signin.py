"""Signing in with a token: on a store with users, each user sees only their own
trees in the page (the Trees view and a thread), and a signed-out page none. (This
module's store is its own: users are added to it here.)"""

from __future__ import annotations

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


def sign_in(page: Any, token: str) -> None:
    from playwright.sync_api import expect

    page.goto("/#/trees")
    form = page.get_by_role("form", name="Sign in")
    form.get_by_label("Token").fill(token)
    form.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()


@pytest.mark.parametrize("who,other", [("ann", "bob"), ("bob", "ann")])
def test_each_user_sees_only_their_own_trees(page: Any, tokens: dict[str, str],
                                             who: str, other: str) -> None:
    from playwright.sync_api import expect

    sign_in(page, tokens[who])
    forest = page.get_by_role("list", name="Trees by lineage")
    expect(forest.get_by_role("link", name=f"{who}'s plan", exact=True)).to_be_visible()
    expect(forest.get_by_role("link", name=f"{other}'s plan")).to_have_count(0)
    forest.get_by_role("link", name=f"{who}'s plan", exact=True).click()
    expect(page.get_by_role("list", name="Messages")).to_contain_text(f"{who}'s secret plan")
    page.goto(f"/#/thread/{other}-s")
    expect(page.get_by_role("alert")).to_contain_text("NotFound")
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("form", name="Sign in")).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text("Unauthorized")
