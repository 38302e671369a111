"""Strings a database cannot hold (issue 22, item 10): a lone surrogate (what invalid
UTF-8 decodes to, or a JSON `"\\udc80"` escape) in any string, and a NUL, which
PostgreSQL's text columns refuse, in content, options, titles, ref names, tags,
bookmark labels, authors, document and collection names, items' tags and fields, and
lookups. Each is either stored and read back as given, or refused with one typed line
(never a driver's own exception) with nothing written, on both backends; over HTTP the
same bodies answer 2xx or 4xx, never 500."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import loomdb
from helpers import row_counts
from loomdb import Loom, LoomError
from loomdb.collections import service as K
from loomdb.documents import service as D
from loomdb.server import create_app

sys.path.insert(0, str(Path(__file__).parent.parent / "server"))
from live import serving  # noqa: E402

BAD = ["lone\udc80surrogate", "\ud800", "nul\x00inside", "\x00"]


def _operations(lm: Loom, s: str) -> dict[str, Callable[[], Any]]:
    return {
        "content": lambda: lm.append("main", s),
        "content block": lambda: lm.append("main", [{"type": "text", "text": s}]),
        "tool input": lambda: lm.append("main", [{"type": "tool_use", "id": "t", "name": "f",
                                                  "input": {"k": s}}], role="assistant"),
        "option value": lambda: lm.append("main", "x", options={"temperature_note": s}),
        "option key": lambda: lm.append("main", "x", options={s: 1}),
        "tree options": lambda: lm.new_tree("x", options={"k": [s]}),
        "title": lambda: lm.new_tree("x", title=s),
        "system": lambda: lm.new_tree("x", system=s),
        "rename": lambda: lm.rename("main", s),
        "author": lambda: lm.append("main", "x", author=s),
        "session name": lambda: lm.new_tree("x", session=s),
        "fork name": lambda: lm.fork("main", s),
        "bookmark label": lambda: lm.bookmark("main", s),
        "tag": lambda: lm.tag("main", s),
        "headish": lambda: lm.resolve(s),
        "headish suffix": lambda: lm.resolve("main~" + s),
        "document name": lambda: D.new(lm, s, "text"),
        "document text": lambda: D.new(lm, "doc-text", s),
        "document message": lambda: D.new(lm, "doc-msg", "text", message=s),
        "collection name": lambda: K.new(lm, s, "tree"),
        "item tag": lambda: K.add(lm, "coll", "main", tags=[s]),
        "item field": lambda: K.add(lm, "coll", "main", fields={"k": s}),
        "item field name": lambda: K.add(lm, "coll", "main", fields={s: "v"}),
    }


OPERATIONS = sorted(_operations(None, "").keys())  # type: ignore[arg-type]


@pytest.mark.parametrize("op", OPERATIONS)
def test_a_bad_string_is_stored_or_refused_and_nothing_written(loom: Loom, op: str) -> None:
    loom.new_tree("base", session="main")
    K.new(loom, "coll", "tree")
    for s in BAD:
        before = row_counts(loom)
        try:
            _operations(loom, s)[op]()
        except LoomError as exc:
            assert type(exc).__name__ in ("InvalidInput", "NotFound"), exc
            assert "\n" not in str(exc)
            assert row_counts(loom) == before, (op, s)
        except Exception as exc:  # noqa: BLE001 - the failure this test is about
            pytest.fail(f"{op} with {s!r} raised {type(exc).__name__}: {exc}")
    assert loom.verify().ok


def test_stored_bad_strings_read_back_exactly(loom: Loom) -> None:
    """What is accepted is kept as given: content with NUL (escaped in its JSON)."""
    loom.new_tree("base", session="main")
    node = loom.append("main", [{"type": "text", "text": "a\x00b"}], options={"k": "\x00"})
    assert loom.node(node.id).content == [{"type": "text", "text": "a\x00b"}]
    assert loom.node(node.id).options == {"k": "\x00"}


# -- over HTTP --------------------------------------------------------------------------
@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def live(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
         ) -> Iterator[tuple[Loom, httpx.Client]]:
    from pg import store_of

    folder = tmp_path_factory.mktemp(f"bad-strings-{request.param}")
    with store_of(request.param, str(folder / "store")) as url, loomdb.open(url) as lm, \
            serving(create_app(lm)) as base:
        lm.new_tree("base", session="main")
        K.new(lm, "coll", "tree")
        D.new(lm, "doc", "text")
        host = base.removeprefix("http://")
        with httpx.Client(base_url=base, timeout=60,
                          headers={"Host": host, "Content-Type": "application/json"}) as http:
            yield lm, http


#: (method, path, JSON body with the bad string as the placeholder S)
REQUESTS = [
    ("POST", "/api/trees", {"text": "S"}),
    ("POST", "/api/trees", {"text": "hi", "title": "S"}),
    ("POST", "/api/trees", {"text": "hi", "system": "S"}),
    ("POST", "/api/trees", {"text": "hi", "session": "S"}),
    ("POST", "/api/nodes/main/append", {"role": "user", "text": "S"}),
    ("POST", "/api/nodes/main/append", {"role": "user",
                                        "content": [{"type": "text", "text": "S"}]}),
    ("POST", "/api/nodes/main/append", {"role": "user", "text": "x", "options": {"k": "S"}}),
    ("POST", "/api/nodes/main/append", {"role": "user", "text": "x", "options": {"S": 1}}),
    ("POST", "/api/nodes/main/append", {"role": "S", "text": "x"}),
    ("POST", "/api/nodes/main/overlay", {"tags": ["S"]}),
    ("POST", "/api/nodes/main/overlay", {"bookmark": "S"}),
    ("POST", "/api/nodes/main/edit", {"text": "S"}),
    ("POST", "/api/refs", {"name": "S", "at": "main", "kind": "bookmark"}),
    ("POST", "/api/refs", {"name": "x", "at": "S", "kind": "session"}),
    ("POST", "/api/documents", {"name": "S", "text": "x"}),
    ("POST", "/api/documents", {"name": "d2", "text": "S", "message": "S"}),
    ("POST", "/api/documents/doc/revisions", {"text": "S", "message": "S"}),
    ("POST", "/api/collections", {"name": "S", "kind": "tree"}),
    ("POST", "/api/collections/coll/items", {"entity": "main", "tags": ["S"]}),
    ("POST", "/api/collections/coll/items", {"entity": "main", "fields": {"S": "S"}}),
    ("POST", "/api/collections/coll/items", {"entity": "S"}),
    ("POST", "/api/links", {"from": "main", "to": "S"}),
    ("GET", "/api/nodes/S", None),
    ("GET", "/api/search?q=S", None),
    ("GET", "/api/refs/S", None),
]
ESCAPES = ["lone\\udc80", "\\ud800x", "nul\\u0000in"]


def _body(template: Any, escape: str) -> bytes:
    return json.dumps(template).replace('"S"', f'"{escape}"').replace(
        '"S":', f'"{escape}":').encode()


@pytest.mark.parametrize("escape", ESCAPES)
def test_http_answers_bad_strings_with_4xx(live: tuple[Loom, httpx.Client], escape: str) -> None:
    lm, http = live
    for method, path, template in REQUESTS:
        before = row_counts(lm)
        if template is None:
            raw = escape.replace("\\u0000", "%00").replace("\\udc80", "%ED%B2%80").replace(
                "\\ud800", "%ED%A0%80")
            answer = http.request(method, path.replace("S", raw))
        else:
            answer = http.request(method, path, content=_body(template, escape))
        assert answer.status_code < 500, (method, path, escape, answer.text)
        assert answer.status_code != 422, (method, path, answer.text)  # the body's shape is right
        if answer.status_code >= 400:
            assert answer.json()["error"]["message"], answer.text
            assert row_counts(lm) == before, (method, path, escape)
