"""The agents' inbox on a store with users, both backends, a live server: each user
sees and decides only the calls waiting on their own trees; another's reads as
unknown. Messages between sessions and personas are the operator's (401)."""

from __future__ import annotations

import pytest
from agent_calls import Tally, pause, tally_world
from live import client, must

from loomdb import Loom
from loomdb.users import add_user

pytestmark = [pytest.mark.xdist_group("local-model"), pytest.mark.slow]


world = tally_world("agents-users")


def test_each_user_sees_and_decides_only_their_own_calls(
        world: tuple[str, Loom, str, Tally], name: str) -> None:
    _, lm, base, tally = world
    (ann, ann_token), (bob, bob_token) = add_user(lm, f"ann-{name}"), add_user(lm, f"bob-{name}")
    hers = pause(lm, tally, f"{name}-ann", owner=ann)
    his = pause(lm, tally, f"{name}-bob", owner=bob)
    with client(base, ann_token) as a, client(base, bob_token) as b:
        assert [p["node"] for p in must(a.get("/api/agents/pending"))["pending"]] == [hers]
        assert [p["node"] for p in must(b.get("/api/agents/pending"))["pending"]] == [his]
        assert must(a.get(f"/api/agents/turns/{hers}"))["state"] == "pending"
        assert b.get(f"/api/agents/turns/{hers}").status_code == 404
        before = tally.runs()
        done = must(a.post(f"/api/agents/pending/{hers}/approve"))
        assert tally.runs() == before + 1 and done["session"] == f"{name}-ann"
        denied = must(b.post(f"/api/agents/pending/{his}/deny", json={"reason": "no"}))
        assert tally.runs() == before + 1 and len(denied["nodes"]) == 1
        assert must(a.get("/api/agents/pending"))["pending"] == []
        assert must(b.get("/api/agents/pending"))["pending"] == []


def test_messages_and_personas_are_the_operators(
        world: tuple[str, Loom, str, Tally], name: str) -> None:
    _, lm, base, _ = world
    _, token = add_user(lm, f"cy-{name}")
    with client(base, token) as c:
        for r in (c.get("/api/agents/messages"), c.get("/api/agents/personas"),
                  c.get("/api/agents/personas/careful"),
                  c.post("/api/agents/messages/anything/approve"),
                  c.post("/api/agents/messages/anything/amend", json={"text": "hi"}),
                  c.post("/api/agents/messages/anything/deny")):
            assert r.status_code == 401, r.text
            assert "operator" in r.json()["error"]["message"]
    with client(base) as nobody:
        assert nobody.get("/api/agents/pending").status_code == 401
