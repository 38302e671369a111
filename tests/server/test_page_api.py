"""What the web page asks of the API beyond the library's own calls, on both backends
through a live server (no users): who the caller is, the models served, a tree renamed
and archived, what deleting would take (nothing written), and switching a session's
version or alternative as a chat does (`Door.refs.switch`)."""

from __future__ import annotations

import httpx
from live import must

from loomdb import Loom


def test_who_and_which_models(http: httpx.Client) -> None:
    assert must(http.get("/api/me")) == {"user": None, "users": False}
    models = must(http.get("/api/models"))
    assert "local" in [m["name"] for m in models["models"]]
    assert models["default"] == "local"
    assert all(set(m) == {"name", "provider", "model"} for m in models["models"])


def test_a_tree_is_renamed_archived_and_brought_back(http: httpx.Client, name: str) -> None:
    made = must(http.post("/api/trees", json={"text": "first", "session": name}), 201)
    tree = made["tree"]
    renamed = must(http.patch(f"/api/trees/{tree}", json={"title": "A better title"}))
    assert renamed["title"] == "A better title" and renamed["archived_at"] is None
    archived = must(http.patch(f"/api/trees/{tree}", json={"archived": True}))
    assert archived["archived_at"]
    assert tree not in [t["id"] for t in must(http.get("/api/trees"))["trees"]]
    assert tree in [t["id"] for t in must(http.get("/api/trees?archived=true"))["trees"]]
    both = must(http.patch(f"/api/trees/{tree}", json={"archived": False, "title": "Back"}))
    assert both["archived_at"] is None and both["title"] == "Back"
    for body, status in (({}, 400), ({"title": "  "}, 400), ({"title": "x", "extra": 1}, 422),
                         ({"archived": "maybe"}, 422)):
        r = http.patch(f"/api/trees/{tree}", json=body)
        assert r.status_code == status, (body, r.text)
    assert must(http.get(f"/api/trees/{tree}/export?format=json")) is not None
    assert http.patch("/api/trees/nope", json={"title": "x"}).status_code == 404


def test_a_dry_run_says_what_a_delete_would_take_and_writes_nothing(
        http: httpx.Client, shared_loom: Loom, name: str) -> None:
    made = must(http.post("/api/trees", json={"text": "q", "session": name}), 201)
    a = must(http.post(f"/api/nodes/{name}/append", json={"role": "assistant", "text": "a"}), 201)
    must(http.post(f"/api/nodes/{name}/append", json={"role": "user", "text": "q2"}), 201)
    side = must(http.post(f"/api/nodes/{made['node']}/append",
                          json={"role": "assistant", "text": "other"}), 201)
    plan = must(http.delete(f"/api/nodes/{a['node']}?dry_run=true"))
    assert len(plan["ids"]) == 2 and plan["refs"] == [name]
    assert must(http.delete(f"/api/nodes/{side['node']}?dry_run=true"))["refs"] == []
    whole = must(http.delete(f"/api/trees/{made['tree']}?dry_run=true"))
    assert len(whole["ids"]) == 4 and whole["refs"] == [name]
    assert shared_loom.node(a["node"]).id == a["node"]  # still there
    assert must(http.get(f"/api/forgotten?tree={made['tree']}")) == []
    gone = must(http.delete(f"/api/nodes/{side['node']}"))
    assert gone["ids"] == [side["node"]]


def test_switching_a_version_shows_its_own_answer_and_an_alternative_its_branch(
        http: httpx.Client, name: str) -> None:
    """q1 -> a1 in session S; edit q (q2) and answer it (a2): switching q's versions
    shows each version's own answer; switching the answer's alternative moves S to the
    newest leaf below it; the address (S) never changes."""
    q1 = must(http.post("/api/trees", json={"text": "q1", "session": name}), 201)["node"]
    a1 = must(http.post(f"/api/nodes/{name}/append",
                        json={"role": "assistant", "text": "a1"}), 201)["node"]
    q2 = must(http.post(f"/api/nodes/{name}~1/edit", json={"text": "q2"}), 201)["node"]
    a2 = must(http.post(f"/api/nodes/{q2}/append",
                        json={"role": "assistant", "text": "a2"}), 201)["node"]
    moved = must(http.post(f"/api/refs/{name}/switch", json={"node": a2}))
    assert moved["node"] == a2

    def path() -> list[str]:
        return must(http.get(f"/api/nodes/{name}/path"))["nodes"]

    assert path() == [q2, a2]
    must(http.post(f"/api/refs/{name}/switch", json={"node": q1}))
    assert path() == [q1, a1]
    must(http.post(f"/api/refs/{name}/switch", json={"node": q2}))
    assert path() == [q2, a2]
    # an alternative beside a1 with a follow-up: the session goes to its newest leaf
    alt = must(http.post(f"/api/nodes/{q1}/append",
                         json={"role": "assistant", "text": "a3"}), 201)["node"]
    leaf = must(http.post(f"/api/nodes/{alt}/append", json={"role": "user", "text": "more"}),
                201)["node"]
    must(http.post(f"/api/refs/{name}/switch", json={"node": alt}))
    assert path()[1:] == [alt, leaf]
    # a version without answers of its own keeps what follows
    q3 = must(http.post(f"/api/nodes/{name}~2/edit", json={"text": "q3"}), 201)["node"]
    must(http.post(f"/api/refs/{name}/switch", json={"node": q3}))
    assert path() == [q3, alt, leaf]
    # somewhere else entirely is refused in words
    other = must(http.post("/api/trees", json={"text": "elsewhere"}), 201)["node"]
    r = http.post(f"/api/refs/{name}/switch", json={"node": other})
    assert r.status_code == 400 and "is not in the tree" in r.json()["error"]["message"]
    deep = must(http.post(f"/api/nodes/{leaf}/append", json={"role": "user", "text": "x"}),
                201)["node"]
    under = must(http.post(f"/api/nodes/{deep}/append", json={"role": "user", "text": "y"}),
                 201)["node"]
    must(http.post(f"/api/refs/{name}/switch", json={"node": a1}))
    r = http.post(f"/api/refs/{name}/switch", json={"node": under})
    assert r.status_code == 400 and "fork there" in r.json()["error"]["message"]
    assert http.post("/api/refs/nope/switch", json={"node": q1}).status_code == 404
