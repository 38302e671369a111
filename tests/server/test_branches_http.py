"""The git verbs over HTTP with users, on a live server over each backend: diff, merge,
replay (no model) and the tail-fork on a caller's own trees; another user's branches
are the same 404 as unknown ones, and a tail-fork is the caller's tree."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from test_users import World, is_hidden

from loomdb import Loom


@pytest.fixture
def world(served: tuple[Loom, str], name: str) -> Iterator[World]:
    yield World(served[0], served[1], name)


def test_the_verbs_on_the_callers_own_trees(world: World) -> None:
    a = world.things["a"]
    s, fork = a["session"], f"{a['session']}-fork"
    with world.http("a") as c:
        assert c.post(f"/api/nodes/{fork}/append", json={"role": "user",
                                                         "text": "other"}).status_code == 201
        r = c.get("/api/branches/diff", params={"left": s, "right": fork})
        assert r.status_code == 200, r.text
        assert r.json()["ancestor"] == a["reply"]
        assert [e["status"] for e in r.json()["entries"]] == ["added"]
        r = c.post("/api/branches/merge", json={"branch": fork, "into": s, "text": "t"})
        assert r.status_code == 201 and r.json()["created"], r.text
        again = c.post("/api/branches/merge", json={"branch": fork, "into": s})
        assert again.json()["node"] == r.json()["node"] and not again.json()["created"]
        r = c.post("/api/branches/replay", json={"path": fork, "session": f"{s}-re",
                                                 "onto": a["root"], "generate": False})
        assert r.status_code == 201, r.text
        assert len(r.json()["turns"]) == 1 and r.json()["stopped"] is None
        r = c.post("/api/branches/fresh", json={"at": fork, "name": f"{s}-new"})
        assert r.status_code == 201, r.text
        new = r.json()["tree"]
        assert r.json()["continued"]["tree"] == a["tree"]
        assert new in {t["id"] for t in c.get("/api/trees").json()["trees"]}
        bad = c.post("/api/branches/merge", json={"branch": s, "into": s, "extra": 1})
        assert bad.status_code == 422
        bad = c.post("/api/branches/fresh", json={"at": fork, "name": f"{s}-x",
                                                  "summary": "openai:gpt-4o"})
        assert bad.status_code == 400, bad.text  # not a served alias
    with world.http("b") as other:
        assert new not in {t["id"] for t in other.get("/api/trees").json()["trees"]}
        assert is_hidden(other.get(f"/api/nodes/{r.json()['node']}"))


def test_another_users_branches_are_404(world: World) -> None:
    a, b = world.things["a"], world.things["b"]
    with world.http("a") as c:
        for r in (c.get("/api/branches/diff", params={"left": a["session"],
                                                      "right": b["session"]}),
                  c.post("/api/branches/merge", json={"branch": b["reply"],
                                                      "into": a["session"]}),
                  c.post("/api/branches/replay", json={"path": b["session"],
                                                       "session": f"{a['session']}-r",
                                                       "generate": False}),
                  c.post("/api/branches/fresh", json={"at": b["reply"],
                                                      "name": f"{a['session']}-f"})):
            assert is_hidden(r), r.text
