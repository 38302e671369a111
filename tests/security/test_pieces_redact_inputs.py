"""Hostile bodies for the routes added with prompt pieces and span redaction: NUL, lone
surrogates, over-long names and patterns, deep JSON, another user's piece by name. Each
is a one-line 4xx, never a 500, and nothing of the other user's changes."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from loomdb import Loom
from loomdb.users import add_user

#: (route, raw JSON body, status): raw, so a lone surrogate reaches the server as sent
SHAPES = [
    ("/api/pieces", '{"name": "x\\u0000y", "text": "t"}', 400),
    ("/api/pieces", '{"name": "ok", "text": "a\\ud800b"}', 400),
    ("/api/pieces", '{"name": "o\\udfffk", "text": "ab"}', 400),
    ("/api/pieces", '{"name": "' + "n" * 5000 + '", "text": "t"}', 400),
    ("/api/pieces", '{"name": "big", "text": "' + "x" * 1_100_000 + '"}', 413),
    ("/api/pieces", '{"name": "d", "text": "x", "kind": ' + "[" * 5000 + "]" * 5000 + "}", 400),
    ("/api/pieces", '{"name": "rubric", "text": "mine now"}', 400),  # ann's name
    ("/api/trees", '{"text": "hi", "template": "rubric"}', 404),  # ann's template
    ("/api/trees", '{"text": "hi", "system_piece": "rubric"}', 400),
    ("/api/redact", '{"text": "\\ud800abcd"}', 422),
    ("/api/redact", '{"pattern": "\\ud800+"}', 422),
    ("/api/redact", '{"pattern": "' + "x" * 5000 + '"}', 422),
    ("/api/redact", '{"pattern": ""}', 400),
]


@pytest.fixture(scope="module")
def two(served: tuple[Loom, str]) -> tuple[str, dict[str, str], dict[str, str]]:
    lm, base = served
    ann = {"Authorization": f"Bearer {add_user(lm, 'ann-pieces')[1]}"}
    bob = {"Authorization": f"Bearer {add_user(lm, 'bob-pieces')[1]}"}
    made = httpx.post(f"{base}/api/pieces", json={"name": "rubric", "text": "be kind"},
                      headers=ann)
    assert made.status_code == 201, made.text
    return base, ann, bob


@pytest.mark.parametrize(("route", "raw", "status"), SHAPES,
                         ids=[f"{r}-{i}" for i, (r, _, _) in enumerate(SHAPES)])
def test_a_hostile_body_is_one_line_and_changes_nothing(
        two: tuple[str, dict[str, str], dict[str, str]], route: str, raw: str,
        status: int) -> None:
    base, ann, bob = two
    answer = httpx.post(f"{base}{route}", content=raw.encode("utf-8", "surrogatepass"),
                        headers={**bob, "Content-Type": "application/json"}, timeout=60)
    assert answer.status_code == status, answer.text[:300]
    message: Any = answer.json()["error"]["message"]
    assert "\n" not in message and "Traceback" not in message
    kept = httpx.get(f"{base}/api/pieces/rubric@1", headers=ann).json()
    assert kept["text"] == "be kind"
    assert httpx.get(f"{base}/api/pieces", headers=bob).json()["pieces"] == []
