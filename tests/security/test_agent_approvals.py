"""Deciding another user's waiting tool call over HTTP, both backends: approving,
amending or denying it by its id, an id prefix or its session's name is refused
exactly as an unknown name (404), and nothing changes: the tool never runs, the call
still waits, the session stays where it was, no node is written."""

from __future__ import annotations

import pytest
from agent_calls import Tally, pause, tally_world
from live import client

from loomdb import Loom
from loomdb.users import add_user

pytestmark = [pytest.mark.xdist_group("local-model"), pytest.mark.slow]


world = tally_world("approvals")


def test_another_users_call_cannot_be_approved_or_denied(
        world: tuple[str, Loom, str, Tally], tag: str) -> None:
    _, lm, base, tally = world
    victim, _ = add_user(lm, f"victim-{tag}")
    _, token = add_user(lm, f"mallory-{tag}")
    session = f"work-{tag}"
    node = pause(lm, tally, session, owner=victim)
    tree = lm.node(node).tree
    call_id = lm.node(node).content[0]["id"]
    count = len(lm.tree_nodes(tree))
    runs = tally.runs()
    with client(base, token) as c:
        for name in (node, node[:12], session):
            for how, body in (("approve", None), ("deny", {"reason": "mine now"}),
                              ("amend", {"inputs": {call_id: {"what": "mine now"}}})):
                r = c.post(f"/api/agents/pending/{name}/{how}", json=body)
                assert r.status_code == 404, r.text
                assert r.json() == {"error": {"type": "NotFound",
                                              "message": f"unknown headish: {name!r}"}}
        assert c.get("/api/agents/pending").json() == {"pending": []}
        assert c.get(f"/api/agents/turns/{node}").status_code == 404
    assert tally.runs() == runs
    assert [p.node for p in lm.agents.pending() if p.tree == tree] == [node]
    assert lm.resolve(session).node == node
    assert len(lm.tree_nodes(tree)) == count
