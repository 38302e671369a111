"""Users over HTTP: tokens (shown once, stored hashed), 401 without one, and isolation:
user A can neither read, list, append to, export nor delete anything of user B's, on
every endpoint, and what is B's looks exactly like what does not exist."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from live import client

from loomdb import Loom
from loomdb.users import USERS, add_user

#: an import is the raw file (a form cannot send this type)
RAW = {"content-type": "application/octet-stream"}
FIXTURES = Path(__file__).parent.parent / "fixtures" / "interop"


def q(headish: str) -> str:
    return quote(headish, safe="")


class World:
    """Two users, each with a dialogue tree (session, view, bookmark, a fork) and a
    buffer tree, made over HTTP."""

    def __init__(self, loom: Loom, base: str, tag: str) -> None:
        self.loom = loom
        self.base = base
        self.tokens: dict[str, str] = {}
        self.things: dict[str, dict[str, str]] = {}
        for who in ("a", "b"):
            _, token = add_user(loom, f"{who}-{tag}")
            self.tokens[who] = token
            self.things[who] = self._build(who, tag)

    def http(self, who: str) -> httpx.Client:
        return client(self.base, self.tokens[who])

    def _build(self, who: str, tag: str) -> dict[str, str]:
        s = f"{who}-{tag}"
        with self.http(who) as c:
            made = c.post("/api/trees", json={"text": f"{who} secret", "session": s}).json()
            reply = c.post(f"/api/nodes/{s}/append", json={"role": "assistant",
                                                           "text": "ok"}).json()["node"]
            for name, kind in ((f"{s}-view", "view"), (f"{s}-mark", "bookmark"),
                               (f"{s}-fork", "session")):
                r = c.post("/api/refs", json={"name": name, "kind": kind, "at": s})
                assert r.status_code == 201, r.text
            c.post("/api/trees", json={"text": "draft me", "session": f"{s}-buf",
                                       "mode": "buffer"})
        return {"tree": made["tree"], "root": made["node"], "reply": reply, "session": s,
                "view": f"{s}-view", "mark": f"{s}-mark", "buffer": f"{s}-buf"}


@pytest.fixture
def world(served: tuple[Loom, str], name: str) -> Iterator[World]:
    yield World(served[0], served[1], name)


def is_hidden(r: httpx.Response) -> bool:
    return r.status_code == 404 and r.json()["error"]["type"] == "NotFound"


def test_without_a_token_or_with_a_bad_one_every_call_is_401(world: World) -> None:
    b = world.things["b"]
    with client(world.base) as anon, client(world.base, "not-a-token") as bad:
        for c in (anon, bad):
            for method, path in (("GET", "/api/trees"), ("GET", f"/api/nodes/{b['reply']}"),
                                 ("POST", "/api/verify"), ("GET", "/api/refs")):
                r = c.request(method, path)
                assert r.status_code == 401, (path, r.text)
                assert r.json()["error"]["type"] == "Unauthorized"
        assert anon.get("/api/health").json() == {"ok": True}


def test_a_user_sees_only_their_own_lists(world: World) -> None:
    a, b = world.things["a"], world.things["b"]
    with world.http("a") as c:
        trees = {t["id"] for t in c.get("/api/trees").json()["trees"]}
        assert a["tree"] in trees and b["tree"] not in trees
        refs = {r["name"] for r in c.get("/api/refs").json()["refs"]}
        assert {a["session"], a["view"], a["mark"]} <= refs
        assert not {b["session"], b["view"], b["mark"], b["buffer"]} & refs
        report = c.post("/api/verify").json()
        mine = len(world.loom.tree_nodes(a["tree"])) + len(world.loom.tree_nodes(a["buffer"]))
        assert report["ok"] and report["checked"] >= mine


def test_nothing_of_another_user_can_be_read_or_touched(world: World) -> None:
    b = world.things["b"]
    before = world.loom.path(b["session"])
    refs_before = {r.name: r.node for r in world.loom.refs(tree=b["tree"])}
    reads = [f"/api/nodes/{q(h)}{rel}" for h in (b["reply"], b["session"], b["view"],
                                                 b["mark"], f"{b['session']}~1", b["root"][:10])
             for rel in ("", "/path", "/children", "/siblings", "/leaves", "/versions",
                         "/thread", "/context", "/context?format=openai")]
    reads += [f"/api/refs/{q(b[k])}" for k in ("session", "view", "mark")]
    reads += [f"/api/refs/{q(b[k])}/log" for k in ("session", "view", "mark")]
    reads += [f"/api/refs?tree={b['tree']}", f"/api/trees/{b['tree']}/export",
              f"/api/trees/{b['tree']}/export?format=markdown",
              f"/api/trees/{b['session']}/export", f"/api/buffer/{q(b['buffer'])}",
              f"/api/buffer/{q(b['buffer'])}?authorship=true",
              f"/api/buffer/{q(b['buffer'])}/alternatives"]
    writes = [
        (f"/api/nodes/{q(b['session'])}/append", {"role": "user", "text": "intrude"}),
        (f"/api/nodes/{b['reply']}/append", {"role": "user", "text": "intrude"}),
        ("/api/nodes/mine/append", {"role": "user", "text": "x", "expect": b["reply"]}),
        (f"/api/nodes/{q(b['session'])}/edit", {"text": "rewritten"}),
        (f"/api/nodes/{b['root']}/overlay", {"tags": ["mine"], "excluded": True}),
        (f"/api/nodes/{b['root']}/overlay", {"bookmark": "stolen"}),
        (f"/api/nodes/{q(b['session'])}/generate", {"n": 1, "max_tokens": 1}),
        (f"/api/nodes/{q(b['session'])}/generate", {"n": 1, "max_tokens": 1, "stream": True}),
        ("/api/refs", {"name": "a-fork-of-b", "kind": "session", "at": b["reply"]}),
        ("/api/refs", {"name": "a-mark-of-b", "kind": "bookmark", "at": b["session"]}),
        (f"/api/refs/{q(b['session'])}/select", {"node": b["reply"]}),
        (f"/api/buffer/{q(b['buffer'])}", {"append": "intrude"}),
        (f"/api/buffer/{q(b['buffer'])}/span", {"start": 0, "end": 1, "text": "X"}),
        (f"/api/buffer/{q(b['buffer'])}/switch", {"node": b["root"]}),
        (f"/api/buffer/{q(b['buffer'])}/next", {"top": 3}),
        (f"/api/agents/pending/{q(b['session'])}/approve", {}),
        (f"/api/agents/pending/{q(b['session'])}/deny", {}),
        (f"/api/agents/pending/{q(b['session'])}/amend", {"inputs": {"x": {}}}),
    ]
    reads += [f"/api/agents/turns/{q(h)}" for h in (b["reply"], b["session"])]
    with world.http("a") as c:
        c.post("/api/trees", json={"text": "a's", "session": "mine"})
        for path in reads:
            assert is_hidden(c.get(path)), path
        for path, body in writes:
            assert is_hidden(c.post(path, json=body)), path
        for k in ("session", "view", "mark", "buffer"):
            assert is_hidden(c.delete(f"/api/refs/{q(b[k])}")), k
        # what is B's reads exactly like what does not exist
        foreign = c.get(f"/api/nodes/{q(b['session'])}").json()
        unknown = c.get("/api/nodes/no-such-session").json()
        assert foreign["error"]["message"].replace(b["session"], "X") == \
            unknown["error"]["message"].replace("no-such-session", "X")
    assert world.loom.path(b["session"]) == before
    assert {r.name: r.node for r in world.loom.refs(tree=b["tree"])} == refs_before
    assert world.loom.meta(b["root"]).tags == () or list(world.loom.meta(b["root"]).tags) == []
    assert not world.loom.meta(b["root"]).excluded


def test_imports_belong_to_the_importer(world: World) -> None:
    sample = FIXTURES / "sharegpt_llamafactory_mllm_demo.json"
    with world.http("a") as a, world.http("b") as b:
        report = a.post("/api/import", content=sample.read_bytes(), params={"filename": sample.name}, headers=RAW).json()
        assert report["trees"]
        b_trees = {t["id"] for t in b.get("/api/trees").json()["trees"]}
        assert not set(report["trees"]) & b_trees
        assert is_hidden(b.get(f"/api/trees/{report['trees'][0]}/export"))
    with world.loom.unit(USERS) as db:
        rows = db.execute("SELECT filename FROM user_imports WHERE user_id = "
                          "(SELECT id FROM users WHERE name = ?)", (f"a-{world_tag(world)}",))
    assert rows == [(sample.name,)]


def test_an_import_cannot_grow_another_users_trees(world: World) -> None:
    sample = FIXTURES / "oasst_en_first10_trees.jsonl"
    with world.http("a") as a, world.http("b") as b:
        first = a.post("/api/import", content=sample.read_bytes(), params={"filename": sample.name}, headers=RAW)
        assert first.status_code == 201 and first.json()["trees"]
        counts = {t: len(world.loom.tree_nodes(t)) for t in first.json()["trees"]}
        again = b.post("/api/import", content=sample.read_bytes(), params={"filename": sample.name}, headers=RAW)
        assert again.status_code == 400, again.text
        assert "another user" in again.json()["error"]["message"]
        assert b.get("/api/trees").json()["trees"] == [
            t for t in b.get("/api/trees").json()["trees"] if t["id"] not in counts]
        same = a.post("/api/import", content=sample.read_bytes(), params={"filename": sample.name}, headers=RAW)
        assert same.status_code == 201 and same.json()["trees"] == []  # idempotent for A
    assert {t: len(world.loom.tree_nodes(t)) for t in counts} == counts


def world_tag(world: World) -> str:
    return world.things["a"]["session"].removeprefix("a-")


def test_tokens_are_stored_hashed(world: World) -> None:
    with world.loom.unit(USERS) as db:
        stored = {r[0] for r in db.execute("SELECT token_hash FROM users")}
    for token in world.tokens.values():
        assert token not in stored
        assert hashlib.sha256(token.encode()).hexdigest() in stored


def test_a_user_added_a_moment_ago_is_never_served_as_the_operator(tmp_path: Path) -> None:
    """"No users" is trusted for a second (`loomdb user add` takes effect within one),
    but never for a caller with a token: a bad one is refused, a new user's is theirs."""
    from live import serving

    import loomdb
    from loomdb.server import create_app

    with loomdb.open(str(tmp_path / "store")) as lm, serving(create_app(lm)) as base:
        assert httpx.get(f"{base}/api/trees").status_code == 200  # no users: seen, trusted
        _, token = add_user(lm, "ann")
        bad = httpx.get(f"{base}/api/trees", headers={"Authorization": "Bearer nobody"})
        assert bad.status_code == 401, bad.text
        mine = httpx.post(f"{base}/api/trees", json={"text": "ann's", "session": "a"},
                          headers={"Authorization": f"Bearer {token}"})
        assert mine.status_code == 201
        listed = httpx.get(f"{base}/api/trees", headers={"Authorization": f"Bearer {token}"})
        assert [t["id"] for t in listed.json()["trees"]] == [mine.json()["tree"]]
