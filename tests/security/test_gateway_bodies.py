"""Wrong types and deep JSON at the OpenAI-compatible gateway (issue 22, item 10): every
body below answers 400 in OpenAI's error shape, one line naming the field, with
nothing written and the server still serving; before, each was a 500 (or a crash of
the local model, which got `logprobs: "x"` as true). A live server on loopback over
both backends. The model behind the alias is an OpenAI-compatible endpoint that is
down, so a body that passes every check answers 502, never 500."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import loomdb
from helpers import row_counts
from loomdb import Loom
from loomdb.providers.config import parse_config
from loomdb.server import create_app

sys.path.insert(0, str(Path(__file__).parent.parent / "server"))
from live import serving  # noqa: E402

#: an alias whose endpoint refuses connections at once (nothing listens on port 1)
DOWN = parse_config({"default": "down", "models": {"down": {
    "provider": "openai", "base_url": "http://127.0.0.1:1/v1", "model": "m",
    "api_key_env": "LOOMDB_TEST_NO_KEY", "max_retries": 0, "timeout": 5}}})


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def gateway(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
            ) -> Iterator[tuple[Loom, httpx.Client]]:
    from pg import store_of

    folder = tmp_path_factory.mktemp(f"gateway-{request.param}")
    with store_of(request.param, str(folder / "store")) as url, loomdb.open(url) as lm, \
            serving(create_app(lm, config=DOWN)) as base:
        headers = {"Host": base.removeprefix("http://"), "Content-Type": "application/json"}
        with httpx.Client(base_url=base, timeout=60, headers=headers) as http:
            yield lm, http


M = [{"role": "user", "content": "hi"}]
CHAT = "/v1/chat/completions"
BAD: list[tuple[str, Any, str]] = [
    (CHAT, {"model": "down", "messages": M, "logprobs": "x"}, "logprobs"),
    (CHAT, {"model": "down", "messages": M, "n": "2"}, "n"),
    (CHAT, {"model": "down", "messages": M, "n": 2.0}, "n"),
    (CHAT, {"model": "down", "messages": {}}, "messages"),
    (CHAT, {"model": "down", "messages": "hi"}, "messages"),
    (CHAT, {"model": "down", "messages": M, "stream": "yes"}, "stream"),
    (CHAT, {"model": "down", "messages": M, "stream": True, "stream_options": "x"},
     "stream_options"),
    (CHAT, {"model": ["down"], "messages": M}, "model"),
    (CHAT, {"model": {}, "messages": M}, "model"),
    (CHAT, {"model": "down", "messages": M, "logprobs": True, "top_logprobs": "3"},
     "top_logprobs"),
    (CHAT, {"model": "down", "messages": M, "max_tokens": "5"}, "max_tokens"),
    (CHAT, {"model": "down", "messages": M, "max_tokens": -5}, "max_tokens"),
    (CHAT, {"model": "down", "messages": M, "max_completion_tokens": 0},
     "max_completion_tokens"),
    (CHAT, {"model": "down", "messages": M, "temperature": "hot"}, "temperature"),
    (CHAT, {"model": "down", "messages": M, "stop": 5}, "stop"),
    (CHAT, {"model": "down", "messages": M, "stop": ["a", 1]}, "stop"),
    (CHAT, {"model": "down", "messages": M, "tools": {}}, "tools"),
    (CHAT, {"model": "down", "messages": M, "tool_choice": 3}, "tool_choice"),
    (CHAT, {"model": "down", "messages": M, "seed": 2**70}, "seed"),
    (CHAT, {"model": "down", "messages": [{"role": {}, "content": "x"}]}, "role"),
    (CHAT, {"model": "down", "messages": [{"role": ["user"], "content": "x"}]}, "role"),
    (CHAT, {"model": "down", "messages": [5]}, "messages[0]"),
    (CHAT, {"model": "down", "messages": [{"role": "user", "content": 5}]}, "content"),
    (CHAT, {"model": "down", "messages": [{"role": "assistant", "tool_calls": "x"}]},
     "tool_calls"),
    ("/v1/responses", {"model": "down", "input": 5}, "input"),
    ("/v1/responses", {"model": "down", "input": "hi", "previous_response_id": {}},
     "previous_response_id"),
    ("/v1/responses", {"model": "down", "input": "hi", "instructions": 5}, "instructions"),
    ("/v1/responses", {"model": "down", "input": "hi", "max_output_tokens": "x"},
     "max_output_tokens"),
    ("/v1/responses", {"model": "down", "input": [5]}, "input"),
    ("/v1/completions", {"model": "down", "prompt": "hi", "logprobs": "x"}, "logprobs"),
    ("/v1/completions", {"model": "down", "prompt": "hi", "logprobs": -5}, "logprobs"),
    ("/v1/completions", {"model": "down", "prompt": "hi", "logprobs": 1e308}, "logprobs"),
    ("/v1/completions", {"model": "down", "prompt": "hi", "echo": "no"}, "echo"),
    ("/v1/completions", {"model": {}, "prompt": "hi"}, "model"),
]

RAW: list[tuple[bytes, str]] = [
    (b"[" * 100_000, "body"),                                # deeper than the parser goes
    (b'{"a":' * 200 + b"1" + b"}" * 200, "body"),            # deeper than the limit
    (b'{"model": "down", "messages": ' + b"[" * 70 + b"]" * 70 + b"}", "body"),
    (b"\xff\xfe", "body"),                                   # not UTF-8
    (b'{"model": "down", "messages": [{"role": "user", "content": "\\ud800"}]}', "body"),
    (b'{"model": "\\udc80", "messages": []}', ""),
    (b'{"model": "down", "messages": [{"role": "user", "content": "x"}], "temperature": NaN}',
     "body"),
    (b'{"model": "down", "messages": [{"role": "user", "content": "x"}], "top_p": Infinity}',
     "body"),
    (b"[]", "body"), (b"5", "body"), (b"", "body"), (b"null", "body"),
]


def _refused(answer: httpx.Response, field: str) -> None:
    assert answer.status_code == 400, (answer.status_code, answer.text[:300])
    error = answer.json()["error"]
    assert error["type"] == "invalid_request_error" and "\n" not in error["message"]
    if field:
        assert field in f"{error['param']} {error['message']}", error


def test_wrong_types_answer_400(gateway: tuple[Loom, httpx.Client]) -> None:
    lm, http = gateway
    before = row_counts(lm)
    for path, body, field in BAD:
        _refused(http.post(path, content=json.dumps(body)), field)
    assert row_counts(lm) == before


@pytest.mark.parametrize("path", [CHAT, "/v1/responses", "/v1/completions"])
def test_malformed_and_deep_json_answers_400(gateway: tuple[Loom, httpx.Client],
                                             path: str) -> None:
    lm, http = gateway
    before = row_counts(lm)
    for raw, field in RAW:
        _refused(http.post(path, content=raw), field)
    assert row_counts(lm) == before


def test_a_good_body_still_reaches_the_model(gateway: tuple[Loom, httpx.Client]) -> None:
    """The checks refuse only what is wrong: null fields are "not given", escaped
    surrogate pairs (emoji, as `json.dumps` writes them) are text, and the request goes
    on to the model (here an endpoint that is down: 502, nothing written)."""
    lm, http = gateway
    before = row_counts(lm)
    body = {"model": "down", "messages": [{"role": "user", "content": "hi \U0001f600"}],
            "n": None, "logprobs": None, "temperature": 0.5, "stop": ["x"], "seed": 3,
            "max_tokens": 8, "stream_options": None, "extra_field": {"kept": [1]}}
    answer = http.post(CHAT, content=json.dumps(body))  # ensure_ascii: a \ud83d\ude00 pair
    assert answer.status_code == 502, answer.text
    assert answer.json()["error"]["type"] == "upstream_error"
    assert row_counts(lm) == before
