"""Live-update streams cannot be taken from everyone (issue 32, item 6), over a live
server on both backends. A share link's streams count against the link's maker, not
the link (one user's many links no longer fill the server); link streams, which need
no token, count against the client's address too; and the last slots go only to
callers holding none yet. On the main this was written against, each link was a
caller of its own: eight links filled the server-wide cap with no token at all.

The caps are made small here (the same rules as the defaults: 8 per caller, 8 per
address, 64 in all, the last 16 kept), so each test opens few streams."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest
from live import client, must, serving

from loomdb import Loom
from loomdb.server import create_app
from loomdb.server.live import MAX_PER_ADDRESS, MAX_PER_CALLER, MAX_STREAMS, RESERVED
from loomdb.users import add_user


@pytest.fixture(scope="module")
def app(served: tuple[Loom, str]) -> Iterator[tuple[Any, str]]:
    made = create_app(served[0])
    with serving(made) as url:
        yield made, url


@pytest.fixture
def limited(app: tuple[Any, str]) -> Iterator[tuple[Any, str]]:
    streams = app[0].state.loomdb.streams
    streams.per_caller, streams.per_address, streams.overall, streams.reserved = 2, 3, 6, 2
    try:
        yield streams, app[1]
    finally:
        streams.per_caller, streams.per_address = MAX_PER_CALLER, MAX_PER_ADDRESS
        streams.overall, streams.reserved = MAX_STREAMS, RESERVED


def links(base: str, token: str, tag: str, count: int) -> list[str]:
    """`count` live links of one new session of the user's."""
    with client(base, token) as c:
        must(c.post("/api/trees", json={"text": "hi", "session": f"s-{tag}"}), 201)
        return [must(c.post("/api/shares", json={"headish": f"s-{tag}", "live": True}),
                     201)["token"] for _ in range(count)]


def given_back(streams: Any) -> None:
    """Wait until the server has seen every closed stream go (it notices at the next
    poll of each, a quarter of a second)."""
    deadline = time.monotonic() + 10
    while (streams.open or streams.addresses) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not streams.open and not streams.addresses, (streams.open, streams.addresses)


def refused(r: httpx.Response, words: str) -> None:
    assert r.status_code == 400, (r.status_code, r.text)
    message = r.json()["error"]["message"]
    assert words in message and "\n" not in message, message


def test_a_links_streams_count_against_its_maker(served: tuple[Loom, str],
                                                 limited: tuple[Any, str], tag: str) -> None:
    streams, base = limited
    _, alice = add_user(served[0], f"alice-{tag}")
    tokens = links(base, alice, tag, 4)
    with ExitStack() as held, client(base) as anyone:
        for token in tokens[:2]:
            opened = held.enter_context(anyone.stream("GET", f"/api/s/{token}/events"))
            assert opened.status_code == 200
        # a third link of the same maker is her third stream, refused: the server is
        # not filled by one user's links
        refused(anyone.get(f"/api/s/{tokens[2]}/events"), "at most 2 open at once per caller")
        with client(base, alice) as a:  # her own page counts with her links
            tree = must(a.get("/api/trees"))["trees"][0]["id"]
            refused(a.get(f"/api/trees/{tree}/events"), "at most 2")
        assert sum(streams.open.values()) == 2
    given_back(streams)
    with client(base) as anyone, anyone.stream("GET", f"/api/s/{tokens[3]}/events") as again:
        assert again.status_code == 200  # closed streams are given back


def test_link_streams_are_capped_per_client_address(served: tuple[Loom, str],
                                                    limited: tuple[Any, str], tag: str) -> None:
    streams, base = limited
    makers = [add_user(served[0], f"u{i}-{tag}")[1] for i in range(2)]
    tokens = [t for i, m in enumerate(makers) for t in links(base, m, f"{tag}{i}", 2)]
    with ExitStack() as held, client(base) as anyone:
        for token in tokens[:3]:  # two makers, one address
            opened = held.enter_context(anyone.stream("GET", f"/api/s/{token}/events"))
            assert opened.status_code == 200
        refused(anyone.get(f"/api/s/{tokens[3]}/events"), "from one address")
        assert streams.addresses == {"127.0.0.1": 3}
    given_back(streams)


def test_the_last_slots_are_kept_for_callers_holding_none(served: tuple[Loom, str],
                                                         limited: tuple[Any, str],
                                                         tag: str) -> None:
    streams, base = limited
    users = [add_user(served[0], f"r{i}-{tag}")[1] for i in range(4)]
    with ExitStack() as held:
        def open_(token: str) -> httpx.Response:
            c = held.enter_context(client(base, token))
            tree = must(c.post("/api/trees", json={"text": "hi"}), 201)["tree"]
            return held.enter_context(c.stream("GET", f"/api/trees/{tree}/events"))

        for token in users[:2]:  # two callers, two streams each: 4 of 6, the last 2 kept
            assert open_(token).status_code == 200
            assert open_(token).status_code == 200
        with client(base, users[1]) as again:
            tree = must(again.get("/api/trees"))["trees"][0]["id"]
            refused(again.get(f"/api/trees/{tree}/events"), "keeps its last 2")
        for token in users[2:]:  # callers holding none still get one each
            assert open_(token).status_code == 200
        with client(base, users[3]) as full:
            tree = must(full.get("/api/trees"))["trees"][0]["id"]
            refused(full.get(f"/api/trees/{tree}/events"), "6 open already")
    given_back(streams)
