"""A collection item's field names and values and its tags are text every backend
stores alike (issue 32, point 13): SQLite used to keep a NUL that PostgreSQL refuses,
so a store made on SQLite could not be copied (`loomdb migrate`). The service refuses
one in one line naming the field, before anything is written, on both backends and on
every way in (add, set, tag, over HTTP); what was there stays as it was."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from loomdb import InvalidInput, Loom

#: (what the write does, how its refusal starts)
WRITES: list[tuple[Callable[[Any, str, str], Any], str]] = [
    (lambda c, n, i: c.add(n, "main", fields={"k\x00": "v"}), "field 'k\\x00'"),
    (lambda c, n, i: c.add(n, "main", fields={"k": "v\x00"}), "field 'k' value"),
    (lambda c, n, i: c.add(n, "main", fields={"k": "\x00"}), "field 'k' value"),
    (lambda c, n, i: c.add(n, "main", tags=["a\x00b"]), "tag 'a\\x00b'"),
    (lambda c, n, i: c.set_fields(n, i, {"status": "done\x00"}), "field 'status' value"),
    (lambda c, n, i: c.set_fields(n, i, {"\x00": "x"}), "field '\\x00'"),
    (lambda c, n, i: c.tag(n, i, ["\x00"]), "tag '\\x00'"),
]


def _items(lm: Loom, name: str) -> list[dict[str, Any]]:
    return [{"fields": i["fields"], "tags": i["tags"]}
            for i in lm.collections.show(name)["items"]]


def test_a_nul_in_a_field_or_tag_is_refused_on_both_backends(
        served: tuple[Loom, str], tag: str) -> None:
    lm, _ = served
    lm.new_tree("base", session="main")
    name = f"coll-{tag}"
    lm.collections.new(name, "tree")
    item = lm.collections.add(name, "main", fields={"status": "open"}, tags=["kept"]).id
    before = _items(lm, name)
    for write, where in WRITES:
        with pytest.raises(InvalidInput) as caught:
            write(lm.collections, name, item)
        message = str(caught.value)
        assert message.startswith(where) and "NUL" in message and "\n" not in message, message
        assert _items(lm, name) == before
    with pytest.raises(InvalidInput, match="field 'n'.*text"):
        lm.collections.add(name, "main", fields={"n": 3})


def test_over_http_a_nul_is_a_400_naming_the_field(served: tuple[Loom, str], tag: str) -> None:
    lm, base = served
    name = f"web-{tag}"
    lm.collections.new(name, "tree")
    lm.new_tree("base", session=f"s-{tag}")
    with httpx.Client(base_url=base, timeout=30) as http:
        for body in ({"fields": {"k": "v\u0000"}}, {"fields": {"k\u0000": "v"}},
                     {"tags": ["t\u0000"]}):
            answer = http.post(f"/api/collections/{name}/items",
                               json={"entity": f"s-{tag}", **body})
            assert answer.status_code == 400, answer.text
            assert "NUL" in answer.json()["error"]["message"]
    assert _items(lm, name) == []
