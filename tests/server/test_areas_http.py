"""The areas over HTTP on a single-user store (loopback, no users), both backends, a
live server: documents, collections, links and backlinks, search and gc, each answer
equal to the CLI's `--json` for the same operation on the same store, and the status of
every mistake. Ownership with users is tests/server/test_areas_users.py."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from areas.cli import Cli
from loomdb import Loom
from loomdb.documents import service as D
from test_bad_input import run_cli


@pytest.fixture
def cli(served_store: tuple[str, Loom, str]) -> Cli:
    """The CLI on the store the server serves."""
    return Cli(served_store[0])


def ok(r: httpx.Response, status: int = 200) -> Any:
    assert r.status_code == status, (r.status_code, r.text)
    return r.json()


def fails(r: httpx.Response, status: int, kind: str) -> str:
    assert r.status_code == status, (r.status_code, r.text)
    error = r.json()["error"]
    assert error["type"] == kind, error
    message: str = error["message"]
    return message


def new_doc(http: httpx.Client, name: str, text: str) -> str:
    made = ok(http.post("/api/documents", json={"name": name, "text": text}), 201)
    assert made == {"document": name, "revision": made["revision"]}
    return str(made["revision"])


def commit(http: httpx.Client, name: str, text: str, **extra: str) -> str:
    made = ok(http.post(f"/api/documents/{name}/revisions", json={"text": text, **extra}), 201)
    assert set(made) == {"revision"}
    return str(made["revision"])


# -- documents ----------------------------------------------------------------------
def test_a_document_round_trip_answers_as_the_cli(http: httpx.Client, cli: Cli,
                                                  name: str) -> None:
    first = new_doc(http, name, "one\ntwo\n")
    second = commit(http, name, "one\n2\n", message="fix two")
    log = ok(http.get(f"/api/documents/{name}/log"))
    assert log == cli("doc", "log", name)
    assert [r["id"] for r in log["revisions"]] == [second, first]
    assert log["revisions"][0]["message"] == "fix two"
    assert log["revisions"][0]["parents"] == [first]
    shown = ok(http.get(f"/api/documents/{name}"))
    assert shown == cli("doc", "show", name) == {"document": name, "revision": second,
                                                 "text": "one\n2\n"}
    for at in (first, first[:10], "main"):
        assert ok(http.get(f"/api/documents/{name}", params={"at": at})) == \
            cli("doc", "show", f"{name}@{at}")
    diff = ok(http.get(f"/api/documents/{name}/diff", params={"from": first, "to": second}))
    assert diff == cli("doc", "diff", name, first, second)
    assert "-two\n" in diff["diff"] and "+2\n" in diff["diff"]
    listed = ok(http.get("/api/documents"))
    assert listed == cli("doc", "list")
    assert {"document": name, "branch": "main", "revision": second} in listed["documents"]
    assert ok(http.delete(f"/api/documents/{name}")) == {"deleted": name}
    assert "unknown document" in fails(http.get(f"/api/documents/{name}"), 404, "NotFound")


def test_nothing_changed_is_400_and_writes_nothing(http: httpx.Client, name: str) -> None:
    new_doc(http, name, "same")
    message = fails(http.post(f"/api/documents/{name}/revisions", json={"text": "same"}),
                    400, "InvalidInput")
    assert f"doc:{name} commit" in message and "nothing changed" in message
    assert len(ok(http.get(f"/api/documents/{name}/log"))["revisions"]) == 1


def test_branch_checkout_and_merge(http: httpx.Client, cli: Cli, name: str) -> None:
    base = new_doc(http, name, "a\nb\nc\nd\n")
    made = ok(http.post(f"/api/documents/{name}/branches",
                        json={"name": "feature", "at": base}), 201)
    assert made == {"document": name, "branch": "feature", "revision": base}
    ours = commit(http, name, "A\nb\nc\nd\n")
    theirs = commit(http, name, "a\nb\nc\nD\n", branch="feature")
    merged = ok(http.post(f"/api/documents/{name}/merge",
                          json={"branch": "feature", "message": "merge feature"}), 201)
    assert merged["parents"] == [ours, theirs]
    assert ok(http.get(f"/api/documents/{name}"))["text"] == "A\nb\nc\nD\n"
    again = http.post(f"/api/documents/{name}/merge", json={"branch": "feature"})
    assert "already merged" in fails(again, 400, "InvalidInput")
    at_base = ok(http.post(f"/api/documents/{name}/checkout", json={"target": base}))
    assert at_base == {"document": name, "branch": None, "revision": base}
    assert "not a branch" in fails(http.post(f"/api/documents/{name}/revisions",
                                             json={"text": "x"}), 400, "InvalidInput")
    back = ok(http.post(f"/api/documents/{name}/checkout", json={"target": "feature"}))
    assert back == {"document": name, "branch": "feature", "revision": theirs}
    assert cli("doc", "show", name)["revision"] == theirs


def test_a_merge_conflict_is_409_with_its_regions(http: httpx.Client, cli: Cli,
                                                  name: str) -> None:
    base = new_doc(http, name, "a\nb\nc\n")
    ok(http.post(f"/api/documents/{name}/branches", json={"name": "other", "at": base}), 201)
    commit(http, name, "a\nours\nc\n")
    commit(http, name, "a\ntheirs\nc\n", branch="other")
    before = ok(http.get(f"/api/documents/{name}/log"))
    r = http.post(f"/api/documents/{name}/merge", json={"branch": "other", "message": "m"})
    assert r.status_code == 409, r.text
    error = r.json()["error"]
    assert error["type"] == "MergeConflict" and "1 conflicting region" in error["message"]
    assert error["conflicts"] == [{"base": "b\n", "ours": "ours\n", "theirs": "theirs\n"}]
    assert ok(http.get(f"/api/documents/{name}/log")) == before
    code, out, _ = run_cli(cli.db, "doc", "merge", name, "other", "-m", "m", "--json")
    assert code == 2 and json.loads(out) == r.json()  # one contract, errors included


def test_from_message_shares_the_content_and_blocks_show_as_content(
        http: httpx.Client, cli: Cli, name: str) -> None:
    tree = ok(http.post("/api/trees", json={"text": "words worth keeping",
                                            "session": name}), 201)
    out = ok(http.post("/api/documents/from-message",
                       json={"headish": name, "name": f"{name}-kept"}), 201)
    node = ok(http.get(f"/api/nodes/{tree['node']}"))
    assert out == {"document": f"{name}-kept", "revision": out["revision"],
                   "content_id": node["content_id"]}
    assert ok(http.get(f"/api/documents/{name}-kept"))["text"] == "words worth keeping"
    blocks = [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]
    made = ok(http.post("/api/documents", json={"name": f"{name}-blocks", "content": blocks}),
              201)
    shown = ok(http.get(f"/api/documents/{name}-blocks"))
    assert shown == cli("doc", "show", f"{name}-blocks") == {
        "document": f"{name}-blocks", "revision": made["revision"], "content": blocks}


def test_document_mistakes(http: httpx.Client, name: str) -> None:
    new_doc(http, name, "x")
    unknown = [("GET", "/api/documents/nope", None), ("GET", "/api/documents/nope/log", None),
               ("POST", "/api/documents/nope/revisions", {"text": "y"}),
               ("POST", "/api/documents/nope/merge", {"branch": "main"}),
               ("GET", "/api/documents/nope/diff?from=main&to=main", None),
               ("DELETE", "/api/documents/nope", None),
               ("POST", f"/api/documents/{name}/merge", {"branch": "nope"}),
               ("GET", f"/api/documents/{name}?at=nope", None),
               ("POST", "/api/documents/from-message", {"headish": "nope", "name": "n"})]
    for method, path, body in unknown:
        fails(http.request(method, path, json=body), 404, "NotFound")
    bad = [("POST", "/api/documents", {"name": "bad name", "text": "x"}, 400),
           ("POST", "/api/documents", {"name": name, "text": "x"}, 400),
           ("POST", "/api/documents", {"name": "n", "text": "x", "content": []}, 400),
           ("POST", "/api/documents", {"name": "n"}, 400),
           ("POST", "/api/documents", {"name": "n", "text": "x", "extra": 1}, 422),
           ("POST", f"/api/documents/{name}/branches", {"name": "main"}, 400),
           ("GET", f"/api/documents/{name}/diff?from=main", None, 422)]
    for method, path, body, status in bad:
        r = http.request(method, path, json=body)
        assert r.status_code == status, (path, body, r.text)
        assert set(r.json()["error"]) == {"type", "message"}


# -- collections --------------------------------------------------------------------
def test_a_collection_round_trip_answers_as_the_cli(http: httpx.Client, cli: Cli,
                                                    name: str) -> None:
    coll = f"{name}-c"
    assert ok(http.post("/api/collections", json={"name": coll, "kind": "tree"}), 201) == \
        {"collection": coll, "kind": "tree"}
    tree = ok(http.post("/api/trees", json={"text": "a message", "session": name}), 201)
    new_doc(http, f"{name}-d", "doc text")

    def add(body: dict[str, Any]) -> str:
        return str(ok(http.post(f"/api/collections/{coll}/items", json=body), 201)["item"])

    top = add({"entity": f"doc:{name}-d", "tags": ["read"], "fields": {"status": "todo"}})
    node = add({"entity": tree["node"], "parent": top, "fields": {"status": "done"}})
    whole = add({"entity": f"tree:{tree['tree']}", "after": top})
    moved = ok(http.post(f"/api/collections/{coll}/items/{whole}/move", json={"first": True}))
    assert moved == {"item": whole, "parent": None}
    tags = ok(http.post(f"/api/collections/{coll}/items/{node}/tags", json={"tags": ["x", "y"]}))
    assert tags == {"item": node, "tags": ["x", "y"]}
    untag = {"tags": ["x"], "remove": True}
    assert ok(http.post(f"/api/collections/{coll}/items/{node}/tags", json=untag))["tags"] == ["y"]
    fields = ok(http.patch(f"/api/collections/{coll}/items/{whole}/fields",
                           json={"status": "todo", "owner": "ana"}))
    assert fields == {"item": whole, "fields": {"owner": "ana", "status": "todo"}}
    dropped = ok(http.patch(f"/api/collections/{coll}/items/{whole}/fields",
                            json={"owner": None}))
    assert dropped["fields"] == {"status": "todo"}
    shown = ok(http.get(f"/api/collections/{coll}"))
    assert shown == cli("coll", "show", coll)
    assert [(r["id"], r["depth"]) for r in shown["items"]] == [(whole, 0), (top, 0), (node, 1)]
    assert shown["items"][0]["entity"] == f"tree:{tree['tree']}"
    todo = ok(http.get(f"/api/collections/{coll}", params={"where": "status=todo"}))
    assert todo == cli("coll", "show", coll, "--where", "status=todo")
    assert [r["id"] for r in todo["items"]] == [whole, top]
    tagged = ok(http.get(f"/api/collections/{coll}", params={"tag": "read"}))
    assert [r["id"] for r in tagged["items"]] == [top]
    groups = ok(http.get(f"/api/collections/{coll}", params={"group_by": "status"}))
    assert groups == cli("coll", "show", coll, "--group-by", "status")
    assert {k: [r["id"] for r in v] for k, v in groups["groups"].items()} == {
        "todo": [whole, top], "done": [node]}
    listed = ok(http.get("/api/collections"))
    assert listed == cli("coll", "list") and {"collection": coll, "kind": "tree"} in \
        listed["collections"]
    removed = ok(http.delete(f"/api/collections/{coll}/items/{top}"))
    assert sorted(removed["removed"]) == sorted([top, node])
    assert [r["id"] for r in ok(http.get(f"/api/collections/{coll}"))["items"]] == [whole]


def test_collection_mistakes(http: httpx.Client, name: str) -> None:
    coll = f"{name}-c"
    ok(http.post("/api/collections", json={"name": coll}), 201)
    item = ok(http.post(f"/api/collections/{coll}/items", json={"entity": f"coll:{coll}"}),
              201)["item"]
    cases = [
        ("POST", "/api/collections", {"name": "k", "kind": "pile"}, 422, "ValidationError"),
        ("POST", "/api/collections", {"name": coll}, 400, "InvalidInput"),
        ("POST", "/api/collections", {"name": "bad/name"}, 400, "InvalidInput"),
        ("GET", "/api/collections/nope", None, 404, "NotFound"),
        ("POST", "/api/collections/nope/items", {"entity": f"coll:{coll}"}, 404, "NotFound"),
        ("POST", f"/api/collections/{coll}/items", {"entity": "doc:nope"}, 404, "NotFound"),
        ("POST", f"/api/collections/{coll}/items", {"entity": "sha256:00"}, 400,
         "InvalidInput"),
        ("POST", f"/api/collections/{coll}/items", {"entity": f"coll:{coll}",
                                                    "parent": item}, 400, "InvalidInput"),
        ("POST", f"/api/collections/{coll}/items/nope/move", {"first": True}, 404,
         "NotFound"),
        ("POST", f"/api/collections/{coll}/items/{item}/move", {"after": item}, 400,
         "InvalidInput"),
        ("PATCH", f"/api/collections/{coll}/items/{item}/fields", {}, 400, "InvalidInput"),
        ("PATCH", f"/api/collections/{coll}/items/{item}/fields", {"a=b": "c"}, 400,
         "InvalidInput"),
        ("DELETE", f"/api/collections/{coll}/items/nope", None, 404, "NotFound"),
        ("GET", f"/api/collections/{coll}?where=novalue", None, 400, "InvalidInput"),
    ]
    for method, path, body, status, kind in cases:
        fails(http.request(method, path, json=body), status, kind)


# -- references, search, gc ---------------------------------------------------------
def test_links_and_backlinks_answer_as_the_cli(http: httpx.Client, cli: Cli,
                                               name: str) -> None:
    tree = ok(http.post("/api/trees", json={"text": "cite me", "session": name}), 201)
    reply = ok(http.post(f"/api/nodes/{name}/append",
                         json={"role": "assistant", "text": "ok"}), 201)["node"]
    new_doc(http, name, "notes")
    made = ok(http.post("/api/links", json={"from": f"doc:{name}", "to": tree["node"],
                                            "type": "cites"}), 201)
    assert made == {"id": made["id"], "from": f"doc:{name}", "to": tree["node"],
                    "type": "cites", "created_at": made["created_at"]}
    edge = ok(http.post("/api/links", json={"from": reply, "to": tree["node"]}), 201)
    assert edge["type"] == "link" and edge["target"] == tree["node"]
    assert edge["sources"] == [{"node": reply, "role": "primary"}]
    links = ok(http.get("/api/backlinks", params={"entity": tree["node"]}))
    assert links == cli("backlinks", tree["node"])
    assert {(x["from"], x["type"]) for x in links["links"]} == {
        (f"doc:{name}", "cites"), (reply, "link")}
    fails(http.post("/api/links", json={"from": f"doc:{name}", "to": f"doc:{name}"}), 400,
          "InvalidInput")
    fails(http.post("/api/links", json={"from": f"doc:{name}", "to": "doc:nope"}), 404,
          "NotFound")
    fails(http.post("/api/links", json={"from": f"doc:{name}", "to": tree["node"],
                                        "type": "Bad Type"}), 400, "InvalidInput")
    fails(http.get("/api/backlinks"), 422, "ValidationError")


def test_search_finds_a_revision_an_item_and_a_message(http: httpx.Client, cli: Cli,
                                                       name: str) -> None:
    word = f"zq{name}"
    tree = ok(http.post("/api/trees", json={"text": f"the {word} message",
                                            "session": name}), 201)
    rev = new_doc(http, name, f"a {word} document")
    coll = f"{name}-c"
    ok(http.post("/api/collections", json={"name": coll}), 201)
    item = ok(http.post(f"/api/collections/{coll}/items",
                        json={"entity": f"doc:{name}", "fields": {"note": word}}), 201)["item"]
    hits = ok(http.get("/api/search", params={"q": word}))
    assert hits == cli("search", word)
    assert {(h["entity"], h["kind"]) for h in hits["hits"]} == {
        (tree["node"], "message"), (f"doc:{name}@{rev}", "document"),
        (f"coll:{coll}/{item}", "item")}
    message = next(h for h in hits["hits"] if h["kind"] == "message")
    assert message["tree"] == tree["tree"] and [
        message["snippet"][a:b] for a, b in message["marks"]] == [word]
    assert message["role"] == "user" and message["side"] is False
    assert message["leaf"] == tree["node"] and message["created_at"].startswith("20")
    only = ok(http.get("/api/search", params={"q": word, "kind": "item"}))["hits"]
    assert [h["entity"] for h in only] == [f"coll:{coll}/{item}"]
    in_tree = ok(http.get("/api/search", params={"q": word, "tree": tree["tree"]}))["hits"]
    assert [h["entity"] for h in in_tree] == [tree["node"]]
    assert len(ok(http.get("/api/search", params={"q": word, "limit": 1}))["hits"]) == 1
    fails(http.get("/api/search", params={"q": "!!!"}), 400, "InvalidInput")
    fails(http.get("/api/search", params={"q": word, "limit": 0}), 422, "ValidationError")
    fails(http.get("/api/search", params={"q": word, "mode": "fuzzy"}), 422,
          "ValidationError")
    fails(http.get("/api/search", params={"q": word, "tree": "nope"}), 404, "NotFound")


@pytest.mark.semantic
def test_a_semantic_search_over_http(http: httpx.Client, cli: Cli, name: str) -> None:
    """A query ranks what is embedded and says how much is not; the status route
    counts; once the backlog is embedded (`search --reindex`, or the worker) the
    message is found by meaning."""
    made = ok(http.post("/api/trees", json={"text": "The automobile engine would not turn "
                                            "over this morning.", "session": name}), 201)
    before = ok(http.get("/api/search", params={"q": "car won't start", "mode": "semantic"}))
    assert made["node"] not in {h["entity"] for h in before["hits"]} and before["pending"] >= 1
    status = ok(http.get("/api/search/status"))
    assert status == cli("search", "--status") and status["pending"] >= 1
    assert status["embedded"] + status["pending"] == status["total"]
    cli("search", "--reindex")
    after = ok(http.get("/api/search/status"))
    assert after == {"embedded": status["total"], "total": status["total"], "pending": 0}
    hits = ok(http.get("/api/search", params={"q": "car won't start", "mode": "semantic"}))
    assert hits["hits"][0]["entity"] == made["node"] and hits["pending"] == 0
    alone = cli("search", "car won't start", "--semantic")  # a fresh process's first query
    # the same ranking (entries whose scores tie within rounding may come in either
    # order: each process's float arithmetic differs in the last digits)
    assert hits["hits"][0]["entity"] == alone["hits"][0]["entity"]
    ranked = {h["entity"]: h["score"] for h in hits["hits"]}
    assert ranked.keys() == {h["entity"] for h in alone["hits"]}
    assert [ranked[h["entity"]] for h in alone["hits"]] == pytest.approx(
        [h["score"] for h in alone["hits"]], abs=1e-5)
    fused = ok(http.get("/api/search", params={"q": "automobile", "mode": "hybrid"}))["hits"]
    assert fused[0]["entity"] == made["node"] and [
        fused[0]["snippet"][a:b] for a, b in fused[0]["marks"]] == ["automobile"]


def test_gc_runs_on_a_store_without_users(http: httpx.Client, cli: Cli, shared_loom: Loom,
                                          name: str) -> None:
    new_doc(http, name, f"only {name} says this")
    commit(http, name, "and then this")
    ok(http.delete(f"/api/documents/{name}"))
    dry = ok(http.post("/api/gc", json={"dry_run": True, "grace": 0}))
    assert set(dry) == {"contents", "blobs", "bytes", "purged"} and dry["contents"] >= 2
    assert dry == cli("gc", "--dry-run", "--grace", "0")
    done = ok(http.post("/api/gc", json={"grace": 0}))
    assert done["contents"] >= 2 and done["bytes"] > 0
    assert ok(http.post("/api/gc", json={"dry_run": True, "grace": 0}))["contents"] == 0
    assert ok(http.post("/api/gc")) == {"contents": 0, "blobs": 0, "bytes": 0, "purged": []}
    fails(http.post("/api/gc", json={"grace": -1}), 422, "ValidationError")


def test_what_the_library_made_is_everyones_on_a_single_user_store(
        http: httpx.Client, shared_loom: Loom, name: str) -> None:
    D.new(shared_loom, name, "made by the library")
    assert ok(http.get(f"/api/documents/{name}"))["text"] == "made by the library"
    assert name in [d["document"] for d in ok(http.get("/api/documents"))["documents"]]
    ok(http.post("/api/links", json={"from": f"doc:{name}", "to": "sha256:" + "0" * 64}), 404)
