"""Share links over HTTP are capabilities for one branch (issue 24, point 9).

A link's token opens `/s/{token}` and `/api/s/{token}/...` without an account, and
nothing else: as a bearer token it is refused by every write route (and every other
route); through `/api/s/` it reads the shared path only (not the rest of its tree,
not another tree, not another user's); a revoked or guessed link is a 404, the same
as any unknown one; a user lists and revokes only their own links."""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from live import client, must

from loomdb import Loom
from loomdb.server import create_app
from loomdb.server.app import UPLOADS
from loomdb.users import add_user

SECRET = "the secret on another branch"
OTHER = "bob's own words"


@dataclass
class Scene:
    base: str
    alice: str  # tokens
    bob: str
    tree: str
    path: list[str]  # alice's main: root, reply
    aside: str  # a branch beside it, holding SECRET
    bob_node: str
    share: dict[str, Any]  # alice's live link on main

    def http(self, token: str | None = None) -> httpx.Client:
        return client(self.base, token)


@pytest.fixture
def scene(served: tuple[Loom, str], tag: str) -> Scene:
    lm, base = served
    _, alice = add_user(lm, f"alice-{tag}")
    _, bob = add_user(lm, f"bob-{tag}")
    with client(base, alice) as a:
        made = must(a.post("/api/trees", json={"text": "hi", "session": f"m-{tag}"}), 201)
        reply = must(a.post(f"/api/nodes/m-{tag}/append",
                            json={"text": "hello", "role": "assistant"}), 201)
        aside = must(a.post(f"/api/nodes/{made['node']}/append",
                            json={"text": SECRET, "role": "assistant"}), 201)
        share = must(a.post("/api/shares", json={"headish": f"m-{tag}", "live": True}), 201)
    with client(base, bob) as b:
        other = must(b.post("/api/trees", json={"text": OTHER, "session": f"b-{tag}"}), 201)
    return Scene(base, alice, bob, made["tree"], [made["node"], reply["node"]], aside["node"],
                 other["node"], share)


def test_the_link_reads_its_path_without_a_token(scene: Scene) -> None:
    token = scene.share["token"]
    assert scene.share["path"] == f"/s/{token}"
    with scene.http() as anyone:
        shown = must(anyone.get(f"/api/s/{token}/thread"))
        info = must(anyone.get(f"/api/s/{token}"))
        page = anyone.get(f"/s/{token}")
    assert [m["id"] for m in shown["messages"]] == scene.path
    assert SECRET not in json.dumps(shown) and scene.aside not in json.dumps(shown)
    assert info["head"] == scene.path[-1] and info["kind"] == "live"
    assert page.status_code in (200, 503)  # the app (503: a checkout whose app is unbuilt)


def test_the_token_is_refused_by_every_write_route(served: tuple[Loom, str],
                                                   scene: Scene) -> None:
    """Every route that writes, with the link's token as a bearer token: 401 or 403,
    and nothing is written (the tree still has its three messages)."""
    paths = create_app(served[0]).openapi()["paths"]
    routes = [(m.upper(), path) for path, ops in paths.items() for m in ops
              if m.upper() in ("POST", "PUT", "PATCH", "DELETE")]
    routes += [("POST", "/v1/chat/completions"), ("POST", "/v1/responses")]
    assert len(routes) > 30
    token = scene.share["token"]
    with scene.http(token) as h:
        for method, path in routes:
            url = re.sub(r"\{[^}]+\}", scene.path[-1], path)
            upload = path in UPLOADS
            r = h.request(method, url, content=b"{}" if not upload else b"x",
                          headers={"Content-Type": "application/octet-stream" if upload
                                   else "application/json"})
            assert r.status_code in (401, 403), (method, path, r.status_code, r.text)
        for path in (f"/api/nodes/{scene.path[-1]}/thread", "/api/trees", "/api/shares",
                     f"/api/trees/{scene.tree}/map", f"/api/trees/{scene.tree}/events"):
            assert h.get(path).status_code == 401, path
    with scene.http(scene.alice) as a:
        trees = must(a.get("/api/trees"))["trees"]
        assert [t["nodes"] for t in trees if t["id"] == scene.tree] == [3]


def test_the_link_reaches_nothing_beside_its_branch(scene: Scene) -> None:
    token = scene.share["token"]
    with scene.http() as anyone:
        for before in (scene.aside, scene.bob_node, "nonsense"):
            r = anyone.get(f"/api/s/{token}/thread", params={"before": before})
            assert r.status_code in (400, 404), (before, r.text)
            assert SECRET not in r.text and OTHER not in r.text
        for path in (f"/api/s/{token}/{scene.aside}", f"/api/s/{token}/../nodes/{scene.aside}",
                     f"/api/s/{quote(token + '/' + scene.aside, safe='')}/thread"):
            r = anyone.get(path)
            assert r.status_code in (401, 404), (path, r.status_code)
            assert SECRET not in r.text
    with scene.http(scene.bob) as b:  # bob cannot share alice's branch, nor see her links
        assert b.post("/api/shares", json={"headish": scene.path[-1]}).status_code == 404
        assert b.post("/api/shares", json={"headish": scene.tree}).status_code == 404
        assert must(b.get("/api/shares")) == {"shares": []}


def test_list_and_revoke_are_the_owners_only(scene: Scene) -> None:
    token = scene.share["token"]
    with scene.http(scene.bob) as b:
        assert b.delete(f"/api/shares/{token}").status_code == 404
        assert b.delete(f"/api/shares/{scene.share['id']}").status_code == 404
    with scene.http() as anyone:
        must(anyone.get(f"/api/s/{token}/thread"))  # still works
    with scene.http(scene.alice) as a:
        listed = must(a.get("/api/shares"))["shares"]
        assert [s["id"] for s in listed] == [scene.share["id"]]
        assert token not in json.dumps(listed) and listed[0]["prefix"] == token[:6]
        must(a.delete(f"/api/shares/{token}"))
    with scene.http() as anyone:
        for path in (f"/s/{token}", f"/api/s/{token}", f"/api/s/{token}/thread",
                     f"/api/s/{token}/events"):
            r = anyone.get(path)
            assert r.status_code == 404, (path, r.status_code)
            assert token not in r.text


def test_a_guessed_link_is_unknown(scene: Scene) -> None:
    with scene.http() as anyone:
        for guess in (secrets.token_urlsafe(32), scene.share["token"][:-2],
                      scene.share["token"][:6], scene.share["id"], "x" * 5000):
            for path in (f"/api/s/{guess}", f"/api/s/{guess}/thread", f"/s/{guess}"):
                assert anyone.get(path).status_code in (404, 414), (guess[:10], path)


def test_a_snapshot_does_not_move(scene: Scene) -> None:
    with scene.http(scene.alice) as a:
        snap = must(a.post("/api/shares", json={"headish": scene.path[-1]}), 201)
        tag = scene.share["session"]
        must(a.post(f"/api/nodes/{tag}/append", json={"text": "later", "role": "user"}), 201)
        refused = a.post("/api/shares", json={"headish": scene.path[-1], "live": True})
        assert refused.status_code == 400 and "session" in refused.json()["error"]["message"]
    with scene.http() as anyone:
        fixed = must(anyone.get(f"/api/s/{snap['token']}/thread"))
        moved = must(anyone.get(f"/api/s/{scene.share['token']}/thread"))
    assert [m["id"] for m in fixed["messages"]] == scene.path
    assert moved["messages"][-1]["content"] == [{"type": "text", "text": "later"}]
