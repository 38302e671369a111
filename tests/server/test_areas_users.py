"""The areas on a store with users, both backends, a live server: each user's
documents and collections are theirs alone, and what is another's (or whatever an
address, a hit or a link would reveal of it) reads exactly as unknown; names stay
unique in the store, so another's name is refused as taken; gc is the operator's. A
share link allowing "continue" gives a reader a fork of their own the maker cannot
read, which outlives the link."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import httpx
import pytest
from live import client, must

from areas.cli import Cli
from loomdb import Loom
from loomdb.documents import service as D
from loomdb.references import service as R
from loomdb.users import USERS, add_user, remove_user


class World:
    """Two users, each with a tree, a document and a collection holding an item, made
    over HTTP; `word` is in each user's message, document and item."""

    def __init__(self, loom: Loom, base: str, tag: str) -> None:
        self.loom = loom
        self.base = base
        self.word = f"zq{tag}"
        self.tokens: dict[str, str] = {}
        self.things: dict[str, dict[str, str]] = {}
        for who in ("a", "b"):
            _, self.tokens[who] = add_user(loom, f"{who}-{tag}")
            self.things[who] = self._build(f"{who}-{tag}")

    def http(self, who: str) -> httpx.Client:
        return client(self.base, self.tokens[who])

    def _build(self, s: str) -> dict[str, str]:
        with self.http(s[0]) as c:
            tree = must(c.post("/api/trees", json={"text": f"{self.word} said {s}",
                                                   "session": s}), 201)
            rev = must(c.post("/api/documents", json={"name": f"{s}-doc",
                                                      "text": f"{self.word} doc\n"}),
                       201)["revision"]
            must(c.post("/api/collections", json={"name": f"{s}-coll", "kind": "tree"}), 201)
            item = must(c.post(f"/api/collections/{s}-coll/items",
                               json={"entity": f"doc:{s}-doc", "tags": [self.word]}),
                        201)["item"]
        content = self.loom.node(tree["node"]).content_id
        return {"session": s, "tree": tree["tree"], "node": tree["node"], "doc": f"{s}-doc",
                "rev": rev, "coll": f"{s}-coll", "item": item, "content": content}


@pytest.fixture
def world(served: tuple[Loom, str], name: str) -> Iterator[World]:
    yield World(served[0], served[1], name)


def hidden(r: httpx.Response, what: str, name: str) -> None:
    """404 with exactly the message an unknown name gets."""
    assert r.status_code == 404, r.text
    assert r.json() == {"error": {"type": "NotFound", "message": f"unknown {what}: {name!r}"}}


def test_documents_are_their_owners(world: World) -> None:
    a, b = world.things["a"], world.things["b"]
    doc = a["doc"]
    with world.http("b") as c:
        listed = [d["document"] for d in must(c.get("/api/documents"))["documents"]]
        assert b["doc"] in listed and doc not in listed
        calls = [("GET", f"/api/documents/{doc}", None),
                 ("GET", f"/api/documents/{doc}?at=main", None),
                 ("GET", f"/api/documents/{doc}/log", None),
                 ("GET", f"/api/documents/{doc}/diff?from=main&to=main", None),
                 ("POST", f"/api/documents/{doc}/revisions", {"text": "mine now"}),
                 ("POST", f"/api/documents/{doc}/branches", {"name": "b"}),
                 ("POST", f"/api/documents/{doc}/checkout", {"target": a["rev"]}),
                 ("POST", f"/api/documents/{doc}/merge", {"branch": "main"}),
                 ("DELETE", f"/api/documents/{doc}", None)]
        for method, path, body in calls:
            hidden(c.request(method, path, json=body), "document", doc)
        hidden(c.get("/api/documents/no-such-doc"), "document", "no-such-doc")
    assert [r.id for r in D.log(world.loom, doc)] == [a["rev"]]
    with world.http("a") as c:
        assert must(c.get(f"/api/documents/{doc}"))["text"] == f"{world.word} doc\n"


def test_collections_are_their_owners(world: World) -> None:
    a, b = world.things["a"], world.things["b"]
    coll, item = a["coll"], a["item"]
    with world.http("b") as c:
        listed = [x["collection"] for x in must(c.get("/api/collections"))["collections"]]
        assert b["coll"] in listed and coll not in listed
        calls = [("GET", f"/api/collections/{coll}", None),
                 ("POST", f"/api/collections/{coll}/items", {"entity": f"doc:{b['doc']}"}),
                 ("POST", f"/api/collections/{coll}/items/{item}/move", {"first": True}),
                 ("POST", f"/api/collections/{coll}/items/{item}/tags", {"tags": ["t"]}),
                 ("PATCH", f"/api/collections/{coll}/items/{item}/fields", {"k": "v"}),
                 ("DELETE", f"/api/collections/{coll}/items/{item}", None)]
        for method, path, body in calls:
            hidden(c.request(method, path, json=body), "collection", coll)
    with world.http("a") as c:
        shown = must(c.get(f"/api/collections/{coll}"))["items"]
        assert [(x["id"], x["tags"], x["fields"]) for x in shown] == [(item, [world.word], {})]


def test_nothing_of_another_user_can_be_named_in_an_address(world: World) -> None:
    a, b = world.things["a"], world.things["b"]
    foreign = [(a["node"], "headish", a["node"]), (a["session"], "headish", a["session"]),
               (f"tree:{a['tree']}", "tree", a["tree"]), (f"doc:{a['doc']}", "document", a["doc"]),
               (f"doc:{a['doc']}@{a['rev']}", "document", a["doc"]),
               (f"coll:{a['coll']}", "collection", a["coll"]),
               (f"coll:{a['coll']}/{a['item']}", "collection", a["coll"]),
               (a["content"], "content or blob", a["content"])]
    with world.http("b") as c:
        for address, what, shown in foreign:
            hidden(c.post(f"/api/collections/{b['coll']}/items", json={"entity": address}),
                   what, shown)
            hidden(c.post("/api/links", json={"from": f"doc:{b['doc']}", "to": address}),
                   what, shown)
            hidden(c.post("/api/links", json={"from": address, "to": f"doc:{b['doc']}"}),
                   what, shown)
            hidden(c.get("/api/backlinks", params={"entity": address}), what, shown)
        # what is the caller's own may be named, a content by the hash they hold too
        own = must(c.post("/api/links", json={"from": f"doc:{b['doc']}", "to": b["content"],
                                              "type": "quotes"}), 201)
        assert own["to"] == b["content"]
        items = [x["entity"] for x in must(c.get(f"/api/collections/{b['coll']}"))["items"]]
        assert items == [f"doc:{b['doc']}"]


def test_backlinks_show_only_links_whose_both_ends_are_seen(world: World) -> None:
    a, b = world.things["a"], world.things["b"]
    R.link(world.loom, f"doc:{a['doc']}", f"doc:{b['doc']}", "cites")  # the operator's
    with world.http("b") as c:
        must(c.post("/api/links", json={"from": b["node"], "to": f"doc:{b['doc']}",
                                        "type": "mentions"}), 201)
        links = must(c.get("/api/backlinks", params={"entity": f"doc:{b['doc']}"}))["links"]
    assert {(x["from"], x["type"]) for x in links} == {
        (b["node"], "mentions"), (f"coll:{b['coll']}/{b['item']}", "item")}
    everything = R.backlinks(world.loom, f"doc:{b['doc']}")
    assert (f"doc:{a['doc']}", "cites") in {(x["from"], x["type"]) for x in everything}


def test_search_finds_only_the_callers_own(world: World) -> None:
    for who in ("a", "b"):
        mine = world.things[who]
        with world.http(who) as c:
            hits = must(c.get("/api/search", params={"q": world.word}))["hits"]
            assert {(h["entity"], h["kind"]) for h in hits} == {
                (mine["node"], "message"), (f"doc:{mine['doc']}@{mine['rev']}", "document"),
                (f"coll:{mine['coll']}/{mine['item']}", "item")}
            one = must(c.get("/api/search", params={"q": world.word, "limit": 1}))["hits"]
            assert len(one) == 1 and one[0] in hits
    with world.http("b") as c:
        hidden(c.get("/api/search", params={"q": world.word,
                                            "tree": world.things["a"]["tree"]}),
               "tree", world.things["a"]["tree"])
        refused = c.get("/api/search/status")  # counts over everyone's entries
        assert refused.status_code in (401, 403), refused.text
        assert "counts the whole store" in refused.json()["error"]["message"]


def test_a_name_another_user_holds_is_taken(world: World) -> None:
    a, b = world.things["a"], world.things["b"]
    with world.http("b") as c:
        for path, body, what, taken in (
                ("/api/documents", {"name": a["doc"], "text": "x"}, "document", a["doc"]),
                ("/api/documents/from-message", {"headish": b["node"], "name": a["doc"]},
                 "document", a["doc"]),
                ("/api/collections", {"name": a["coll"]}, "collection", a["coll"])):
            r = c.post(path, json=body)
            assert r.status_code == 400, r.text
            assert r.json()["error"]["message"] == (
                f"{what} {taken!r}: the name is taken (names are unique in the store); "
                "choose another")
        # their own names: the library's answer
        again = c.post("/api/documents", json={"name": b["doc"], "text": "x"})
        assert again.status_code == 400 and "already exists" in again.text
    assert [r.id for r in D.log(world.loom, a["doc"])] == [a["rev"]]


def test_ownership_is_recorded_with_the_write_and_released_with_a_delete(
        world: World) -> None:
    b = world.things["b"]
    with world.http("b") as c:
        made = must(c.post("/api/documents/from-message",
                           json={"headish": b["node"], "name": f"{b['doc']}-2"}), 201)
        assert must(c.get(f"/api/documents/{made['document']}"))["revision"] == made["revision"]
        again = must(c.post("/api/documents/from-message",
                            json={"headish": b["node"], "name": b["doc"]}), 201)
        assert again["document"] == b["doc"]
        doc_id = D.find(world.loom, f"{b['doc']}-2").id  # type: ignore[union-attr]
        must(c.delete(f"/api/documents/{b['doc']}-2"))
    with world.loom.unit(USERS) as db:
        assert db.one("SELECT 1 FROM user_documents WHERE document_id = ?", (doc_id,)) is None
        owned = db.execute("SELECT count(*) FROM user_documents d JOIN users u "
                           "ON u.id = d.user_id WHERE u.name = ?", (b["session"],))
        assert owned == [(1,)]


def test_a_document_made_before_the_users_is_nobodys(world: World, name: str) -> None:
    D.new(world.loom, f"{name}-old", "from the command line")
    with world.http("a") as c:
        hidden(c.get(f"/api/documents/{name}-old"), "document", f"{name}-old")
        r = c.post("/api/documents", json={"name": f"{name}-old", "text": "x"})
        assert r.status_code == 400 and "taken" in r.text


def test_gc_is_the_operators_on_a_store_with_users(world: World) -> None:
    for token in (world.tokens["a"], None):
        with client(world.base, token) as c:
            r = c.post("/api/gc", json={"dry_run": True})
            assert r.status_code == 401, r.text
            assert r.json()["error"]["type"] == "Unauthorized"
            assert "loomdb gc" in r.json()["error"]["message"]


def test_removing_a_user_leaves_their_documents_and_collections_to_nobody(
        world: World) -> None:
    a, b = world.things["a"], world.things["b"]
    remove_user(world.loom, a["session"])
    with world.http("b") as c:
        hidden(c.get(f"/api/documents/{a['doc']}"), "document", a["doc"])
        r = c.post("/api/collections", json={"name": a["coll"]})
        assert r.status_code == 400 and "taken" in r.text
        assert must(c.get(f"/api/documents/{b['doc']}"))["revision"] == b["rev"]
    with world.loom.unit(USERS) as db:
        for table in ("user_documents", "user_collections"):
            left = db.execute(f"SELECT count(*) FROM {table} t LEFT JOIN users u "
                              "ON u.id = t.user_id WHERE u.id IS NULL")
            assert left == [(0,)], table
    assert D.find(world.loom, a["doc"]) is not None  # the document itself stays


def test_session_names_another_user_holds_are_taken_saying_nothing_more(world: World) -> None:
    """A fork, a bookmark or a new conversation named as another user's session is
    refused with the one 'taken' line: not its kind, not that it is a session."""
    a, b = world.things["a"], world.things["b"]
    with world.http("b") as c:
        for path, body, what in (
                ("/api/refs", {"name": a["session"], "kind": "session", "at": b["node"]},
                 "session"),
                ("/api/refs", {"name": a["session"], "kind": "bookmark", "at": b["node"]},
                 "bookmark"),
                ("/api/trees", {"text": "x", "session": a["session"]}, "session")):
            r = c.post(path, json=body)
            assert r.status_code == 400, r.text
            assert r.json()["error"]["message"] == (
                f"{what} {a['session']!r}: the name is taken (names are unique in the store); "
                "choose another")
        own = c.post("/api/refs", json={"name": b["session"], "kind": "session",
                                         "at": b["node"]})
        assert own.status_code == 400 and "already exists" in own.text
        assert must(c.get("/api/me")) == {"user": b["session"], "users": True}
        hidden(c.patch(f"/api/trees/{a['tree']}", json={"title": "mine now"}), "tree",
               a["tree"])
        hidden(c.post(f"/api/refs/{a['session']}/switch", json={"node": a["node"]}), "ref",
               a["session"])
    with client(world.base, "not-a-token") as c:
        assert c.get("/api/me").status_code == 401
    with client(world.base) as c:
        assert c.get("/api/me").status_code == 401


# -- share links that allow continuing --------------------------------------------
PNG = b"\x89PNG\r\n\x1a\n" + b"\1" * 16


def texts(ctx: dict) -> list[str]:  # type: ignore[type-arg]
    return ["".join(b.get("text", "") for b in m["content"]) for m in ctx["messages"]]


def test_a_reader_continues_over_http(served_store: tuple[str, Loom, str], name: str) -> None:
    url, loom, base = served_store
    _, maker_token = add_user(loom, f"maker-{name}")
    _, reader_token = add_user(loom, f"reader-{name}")
    with client(base, maker_token) as maker, client(base, reader_token) as reader:
        tree = must(maker.post("/api/trees", json={"text": "what is a loom?",
                                                   "session": name}), 201)
        image = {"type": "image", "data": base64.b64encode(PNG).decode(),
                 "mime_type": "image/png"}
        shown = must(maker.post(f"/api/nodes/{name}/append", json={
            "role": "assistant", "content": [{"type": "text", "text": "a frame"}, image]}),
            201)
        node = shown["id"] if "id" in shown else shown["node"]
        ref = loom.node(node).content[1]["ref"]
        read_only = must(maker.post("/api/shares", json={"headish": name, "live": True}), 201)
        r = reader.post(f"/api/s/{read_only['token']}/continue",
                        json={"session": f"r-{name}", "text": "and then?"})
        assert r.status_code == 400 and "read-only" in r.json()["error"]["message"]
        made = must(maker.post("/api/shares", json={"headish": name, "live": True,
                                                    "allow_continue": True}), 201)
        assert made["allow_continue"] is True and made["forks"] == 0

        fork = must(reader.post(f"/api/s/{made['token']}/continue",
                                json={"session": f"r-{name}", "text": "and then?"}), 201)
        assert fork["tree"] != tree["tree"] and fork["session"] == f"r-{name}"
        ctx = must(reader.get(f"/api/nodes/r-{name}/context"))
        assert texts(ctx) == ["what is a loom?", "a frame", "and then?"]
        got = reader.get(f"/api/shares/forks/r-{name}/blobs/{ref}", params={"node": node})
        assert got.status_code == 200 and got.content == PNG
        off = reader.get(f"/api/shares/forks/r-{name}/blobs/{ref}",
                         params={"node": tree["node"]})
        assert off.status_code == 404

        listed = must(maker.get("/api/shares"))["shares"]
        assert [s["forks"] for s in listed if s["id"] == made["id"]] == [1]
        for path in (f"/api/nodes/{fork['node']}", f"/api/nodes/{fork['node']}/context",
                     f"/api/trees/{fork['tree']}/export"):
            assert maker.get(path).status_code == 404, path
        assert fork["tree"] not in json.dumps(must(maker.get("/api/trees")))

        must(maker.delete(f"/api/shares/{made['token']}"))
        again = reader.post(f"/api/s/{made['token']}/continue",
                            json={"session": f"r2-{name}", "text": "again"})
        assert again.status_code == 404
        assert texts(must(reader.get(f"/api/nodes/r-{name}/context"))) == texts(ctx)
        assert reader.get(f"/api/shares/forks/r-{name}/blobs/{ref}",
                          params={"node": node}).content == PNG

    # the operator's CLI on the same store: a link allowing continue, then a fork
    cli = Cli(url)
    made = cli("share", name, "--allow-continue")
    assert made["allow_continue"] is True
    out = cli("share", "continue", made["token"], f"op-{name}", "--text", "mine now")
    assert out["session"] == f"op-{name}" and out["tree"] != tree["tree"]
