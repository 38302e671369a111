"""Signing in with a token: on a store with users, each user sees only their own
trees in the page (the Trees view and a thread), and a signed-out page none."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from live import serving

import loomdb
from conftest import BACKENDS, open_page
from loomdb import Loom
from loomdb.server import create_app
from loomdb.users import add_user
from pg import store_of


@pytest.fixture(scope="module", params=BACKENDS)
def with_users(request: pytest.FixtureRequest,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Loom, str, dict[str, str]]]:
    """A served store with users ann and bob, each with a tree of their own."""
    folder = tmp_path_factory.mktemp(f"users-{request.param}")
    with store_of(request.param, str(folder / "store")) as url, loomdb.open(url) as lm, \
            serving(create_app(lm)) as base:
        tokens = {who: add_user(lm, who)[1] for who in ("ann", "bob")}
        for who in ("ann", "bob"):
            made = httpx.post(f"{base}/api/trees", headers={"Authorization": f"Bearer {tokens[who]}"},
                              json={"text": f"{who}'s secret plan", "session": f"{who}-s",
                                    "title": f"{who}'s plan"})
            assert made.status_code == 201, made.text
        yield lm, base, tokens


def sign_in(page: Any, token: str) -> None:
    from playwright.sync_api import expect

    page.goto("/#/trees")
    form = page.get_by_role("form", name="Sign in")
    form.get_by_label("Token").fill(token)
    form.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()


@pytest.mark.parametrize("who,other", [("ann", "bob"), ("bob", "ann")])
def test_each_user_sees_only_their_own_trees(browser: Any, with_users: Any,
                                             request: pytest.FixtureRequest,
                                             who: str, other: str) -> None:
    from playwright.sync_api import expect

    _, base, tokens = with_users
    for page in open_page(browser, base, request):
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
