"""Forgetting with users, on a live server over each backend: another user's node or
tree is the same 404 as an unknown one and nothing of theirs is touched; a redaction
acts on the caller's own copies of a content only (another user's copy of the same
words stays theirs); the record shows a user only the lines about their own trees."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import pytest
from live import client
from test_users import World, is_hidden

from loomdb import Loom


def q(headish: str) -> str:
    return quote(headish, safe="")


@pytest.fixture
def world(served: tuple[Loom, str], name: str) -> Iterator[World]:
    yield World(served[0], served[1], name)


def test_another_users_things_are_404_and_untouched(world: World) -> None:
    b = world.things["b"]
    with world.http("a") as a:
        for r in (a.delete(f"/api/nodes/{b['reply']}", params={"force": "true"}),
                  a.delete(f"/api/nodes/{q(b['session'])}", params={"force": "true"}),
                  a.post(f"/api/nodes/{b['reply']}/redact", json={}),
                  a.delete(f"/api/trees/{b['tree']}", params={"force": "true"}),
                  a.delete(f"/api/trees/{b['tree']}", params={"now": "true"}),
                  a.post(f"/api/trash/{b['tree']}/restore"),
                  a.post("/api/holds", json={"target": f"tree:{b['tree']}"}),
                  a.post("/api/holds", json={"target": b["session"]})):
            assert is_hidden(r), r.text
        assert all(b["tree"] not in e["trees"] for e in a.get("/api/forgotten").json())
    with world.http("b") as bc:
        assert bc.get(f"/api/nodes/{b['reply']}").json()["content"][0]["text"] == "ok"
        assert bc.delete(f"/api/trees/{b['tree']}").status_code == 200  # to b's trash
        assert [e["id"] for e in bc.get("/api/trash").json()] == [b["tree"]]
    with world.http("a") as a:
        assert a.get("/api/trash").json() == [] and a.get("/api/holds").json() == []
        assert is_hidden(a.post(f"/api/trash/{b['tree']}/restore"))
    with world.http("b") as bc:
        assert bc.post(f"/api/trash/{b['tree']}/restore").status_code == 200


def test_a_redaction_acts_on_the_callers_own_copies_only(world: World) -> None:
    a, b = world.things["a"], world.things["b"]
    with world.http("a") as ac:
        # a's reply "ok" is the same content as b's reply "ok"
        r = ac.post(f"/api/nodes/{a['reply']}/redact", json={})
        assert r.status_code == 200, r.text
        assert r.json()["trees"] == [a["tree"]] and b["reply"] not in r.text
        assert ac.get(f"/api/nodes/{a['reply']}").json()["content"][0]["text"] == "[redacted]"
    with world.http("b") as bc:
        assert bc.get(f"/api/nodes/{b['reply']}").json()["content"][0]["text"] == "ok"


def test_without_a_token_it_is_401(world: World) -> None:
    with client(world.base) as anon:
        assert anon.delete(f"/api/nodes/{world.things['a']['reply']}").status_code == 401


def test_a_span_redaction_over_http_reaches_the_callers_trees_only(world: World) -> None:
    a, b = world.things["a"], world.things["b"]
    with world.http("a") as ac:
        # "secret" is in both users' roots ("a secret", "b secret") and titles
        dry = ac.post("/api/redact", json={"text": " secret"})
        assert dry.status_code == 200, dry.text
        assert dry.json()["dry_run"] and list(dry.json()["trees"]) == [a["tree"]]
        assert ac.get(f"/api/nodes/{a['root']}").json()["content"][0]["text"] == "a secret"
        r = ac.post("/api/redact", json={"text": " secret", "dry_run": False})
        assert r.status_code == 200, r.text
        assert r.json()["ids"] == [a["root"]] and b["tree"] not in r.text
        assert ac.get(f"/api/nodes/{a['root']}").json()["content"][0]["text"] == \
            "a[redacted:text]"
        assert is_hidden(ac.post("/api/redact", json={"text": " secret", "tree": b["tree"]}))
        made = ac.post(f"/api/nodes/{a['session']}/append", json={"role": "user", "text": "a" * 40 + "!"})
        assert made.status_code == 201, made.text
        bad = ac.post("/api/redact", json={"pattern": "(a|aa)+$", "dry_run": False})
        assert bad.status_code == 400 and "time budget" in bad.text, bad.text
        assert ac.post("/api/redact", json={"pattern": "a*"}).status_code == 400
    with world.http("b") as bc:
        assert bc.get(f"/api/nodes/{b['root']}").json()["content"][0]["text"] == "b secret"
    assert world.loom.verify().ok
