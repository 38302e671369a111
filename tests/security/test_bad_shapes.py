"""Inputs that still reached a 500 or a traceback (issue 32, item 10), over a live server
on both backends (a store with users, so uploads go through the users' pre-check),
and the command line:

* a native export whose `trees[i].tree` is not an object (an array, a string, a
  number): the reader asked it for its id (an AttributeError, a 500);
* a ShareGPT upload holding a lone surrogate (`\\udcff`): the users' pre-check read the
  file with the parser and died on its UnicodeDecodeError;
* a 200,000-character revision or item reference: SQLite refuses a LIKE pattern that
  long ("LIKE or GLOB pattern too complex"); and `%` / `_` in a prefix were wildcards,
  so `____` named any item;
* `loomdb import` of a 100,000-character path: ENAMETOOLONG as a traceback.

Each now answers one line naming what was wrong: a refused conversation in the import
report, or a 400 / 404, and the store still verifies."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from live import client, must

from loomdb import Loom
from loomdb.limits import NAME_CHARS
from loomdb.users import add_user

LONG = "Z" * 200_000
RAW = {"Content-Type": "application/octet-stream"}


@pytest.fixture(scope="module")
def http(served: tuple[Loom, str]) -> Iterator[httpx.Client]:
    lm, base = served
    _, token = add_user(lm, "shapes")
    with client(base, token) as c:
        must(c.post("/api/trees", json={"text": "seed", "session": "seed"}), 201)
        must(c.post("/api/documents", json={"name": "notes", "text": "first\n"}), 201)
        must(c.post("/api/collections", json={"name": "reading"}), 201)
        must(c.post("/api/collections/reading/items", json={"entity": "doc:notes"}), 201)
        yield c


def one_line(r: httpx.Response, *statuses: int) -> str:
    assert r.status_code in statuses, (r.status_code, r.text[:300])
    assert "Traceback" not in r.text
    message = str(r.json()["error"]["message"])
    assert "\n" not in message and len(message) < 2000, message[:300]
    return message


def upload(c: httpx.Client, data: bytes, name: str, fmt: str = "auto") -> dict[str, Any]:
    r = c.post("/api/import", content=data, headers=RAW,
               params={"filename": name, "format": fmt})
    assert "Traceback" not in r.text
    if r.status_code == 400:
        one_line(r, 400)
        return {"refused": True}
    return dict(must(r, 201))


@pytest.mark.parametrize("tree", [[1, 2], "a tree", 7, None, True],
                         ids=["array", "string", "number", "null", "bool"])
def test_a_native_tree_that_is_not_an_object_is_refused(served: tuple[Loom, str],
                                                        http: httpx.Client, tree: Any) -> None:
    good = {"loomdb_export": 1, "tree": {"id": "01JZZZZZZZZZZZZZZZZZZZZZZ0", "root": "x"}}
    doc = {"loomdb_export": 1, "exported_at": "2026-01-01T00:00:00Z",
           "trees": [{"loomdb_export": 1, "tree": tree}, good]}
    report = upload(http, json.dumps(doc).encode(), "export.json")
    assert report.get("refused") or (report["trees"] == [] and report["errors"]), report
    assert served[0].verify().ok


@pytest.mark.parametrize("shape", ["json", "jsonl"])
def test_a_sharegpt_upload_with_a_lone_surrogate_is_refused_per_conversation(
        served: tuple[Loom, str], http: httpx.Client, shape: str) -> None:
    turns = [{"from": "human", "value": "hi \udcff"}, {"from": "gpt", "value": "hello"}]
    record = json.dumps({"id": f"sg-{shape}", "conversations": turns})  # keeps the escape
    fine = json.dumps({"id": f"sg-fine-{shape}", "conversations": [
        {"from": "human", "value": "plain"}, {"from": "gpt", "value": "text"}]})
    data = f"[{fine}, {record}]" if shape == "json" else f"{fine}\n{record}\n"
    report = upload(http, data.encode(), f"chats.{shape}", "sharegpt")
    assert not report.get("refused"), report
    assert len(report["trees"]) >= 1, report  # the conversation before it landed
    for error in report["errors"]:
        assert "\n" not in error["reason"], error
    assert served[0].verify().ok


@pytest.mark.parametrize("call", [
    ("post", "/api/documents/notes/checkout", {"target": LONG}),
    ("post", "/api/documents/notes/branches", {"name": "b1", "at": LONG}),
    ("post", "/api/collections/reading/items", {"entity": "doc:notes", "after": LONG}),
    ("post", "/api/collections/reading/items", {"entity": f"doc:notes@{LONG}"}),
    ("post", "/api/collections/reading/items", {"entity": f"coll:reading/{LONG}"}),
    ("post", "/api/collections/reading/items", {"entity": "doc:notes", "after": "%%%%"}),
    ("post", "/api/collections/reading/items", {"entity": "doc:notes", "after": "____"}),
    ("post", "/api/documents/notes/checkout", {"target": "____"}),
], ids=["revision", "branch-at", "item-after", "doc-address", "coll-address",
        "percent-prefix", "underscore-prefix", "underscore-revision"])
def test_long_and_wildcard_references_are_refused_in_one_line(
        served: tuple[Loom, str], http: httpx.Client, call: tuple[str, str, Any]) -> None:
    method, path, body = call
    message = one_line(http.request(method, path, json=body), 400, 404)
    assert LONG not in message and str(NAME_CHARS) in message or len(message) < 300
    assert served[0].verify().ok


@pytest.mark.parametrize("path", ["x" * 100_000, "a/" * 50_000 + "b.json"],
                         ids=["long-name", "deep-path"])
def test_import_of_a_path_the_system_cannot_take_is_one_line(
        tmp_path: Any, capsys: pytest.CaptureFixture[str], path: str) -> None:
    from loomdb.cli import main

    with pytest.raises(SystemExit) as done:
        main(["--db", str(tmp_path / "store"), "import", path])
    err = capsys.readouterr().err
    assert done.value.code == 2, err[-500:]
    assert err.startswith("loomdb: error: ") and err.count("\n") == 1, err[-500:]
    assert "Traceback" not in err and len(err) < 1000
