"""The gateway answers every error with the one mapper's status (`loomdb.edge`), in
OpenAI's error shape: each error class raised for real inside a live gateway request
(the model client named by the request fails with it), nothing recorded."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx

from loomdb import Loom, errors
from loomdb.gateway import create_gateway_app

sys.path.insert(0, str(Path(__file__).parents[1] / "server"))
from live import serving  # noqa: E402

#: the gateway's table, pinned: error -> (status, OpenAI type, code)
TABLE: list[tuple[BaseException, int, str, str]] = [
    (errors.UsageError("--x", "no such option"), 400, "invalid_request_error", "UsageError"),
    (errors.InvalidInput("messages[0]", "bad"), 400, "invalid_request_error", "InvalidInput"),
    (errors.TooLarge("content", "over 1 MB"), 413, "invalid_request_error", "TooLarge"),
    (errors.CycleError("edge", "would close a cycle"), 422, "invalid_request_error",
     "CycleError"),
    (errors.Unauthorized(), 401, "authentication_error", "Unauthorized"),
    (errors.NotFound("node", "01ABC"), 404, "not_found_error", "NotFound"),
    (errors.NotFound("model", "ghost"), 404, "not_found_error", "model_not_found"),
    (errors.AmbiguousName("node", "01", ["01A", "01B"]), 404, "not_found_error",
     "AmbiguousName"),
    (errors.RefConflict("main", "A", "B"), 409, "conflict_error", "RefConflict"),
    (errors.RefsInTheWay("01ABC", ["main"]), 409, "conflict_error", "RefsInTheWay"),
    (errors.MergeConflict("doc:plan merge", [{"base": "b", "ours": "o", "theirs": "t"}]), 409,
     "conflict_error", "MergeConflict"),
    (errors.StoreBusy("store", "locked"), 503, "api_error", "StoreBusy"),
    (errors.StoreUnavailable("x.db", "not SQLite", "fix it"), 503, "api_error",
     "StoreUnavailable"),
    (errors.ReadOnlyStore("postgresql://standby/db", "read-only"), 503, "api_error",
     "ReadOnlyStore"),
    (errors.NotCompacted(10, 12), 422, "invalid_request_error", "NotCompacted"),
    (errors.ProviderError("openai", "timed out"), 502, "upstream_error", "ProviderError"),
    (errors.MissingExtra("postgres", "postgres"), 501, "api_error", "MissingExtra"),
    (errors.IntegrityError("blob", "sha256:a", "sha256:b"), 500, "api_error",
     "IntegrityError"),
    (errors.LoomError("something of ours"), 400, "invalid_request_error", "LoomError"),
    (RuntimeError("secret internals"), 500, "api_error", "InternalError"),
]


def _rate_limited() -> errors.ProviderError:
    err = errors.ProviderError("openai", "rate limited (HTTP 429)", retryable=True)
    err.status = 429  # type: ignore[attr-defined]  # as providers.clients sets it
    return err


TABLE.append((_rate_limited(), 429, "rate_limit_error", "ProviderError"))


class Failing:
    """A model client that fails with the error whose index the last message names."""

    def complete(self, ctx: Any, **_: Any) -> Any:
        raise TABLE[int(ctx["messages"][-1]["content"][0]["text"])][0]


def test_every_error_class_answers_the_mappers_status_in_openai_shape(loom: Loom) -> None:
    app = create_gateway_app(loom, clients=lambda spec: Failing())
    with serving(app) as base, httpx.Client(base_url=base, timeout=60) as http:
        for i, (exc, status, kind, code) in enumerate(TABLE):
            for stream in (False, True):
                got = http.post("/v1/chat/completions", json={
                    "model": "local", "stream": stream,
                    "messages": [{"role": "user", "content": str(i)}]})
                assert got.status_code == status, (exc, stream, got.text)
                error = got.json()["error"]
                assert (error["type"], error["code"]) == (kind, code), (exc, error)
                if isinstance(exc, errors.LoomError):
                    assert error["message"] == " ".join(str(exc).split())
                else:  # a bug says only that it is one
                    assert "secret" not in got.text and "Traceback" not in got.text
        bad = http.post("/v1/chat/completions", content=b"{not json",
                        headers={"content-type": "application/json"})
        assert bad.status_code == 400 and bad.json()["error"]["code"] == "InvalidInput"
        unknown = http.post("/v1/chat/completions", json={
            "model": "ghost-model", "messages": [{"role": "user", "content": "0"}]})
        assert unknown.status_code == 404
        assert unknown.json()["error"]["code"] == "model_not_found"
    assert loom.trees() == []  # nothing was recorded for any of them


def test_the_table_covers_every_error_class() -> None:
    classes = {c for c in vars(errors).values()
               if isinstance(c, type) and issubclass(c, errors.LoomError)}
    assert classes <= {type(exc) for exc, *_ in TABLE}


#: Anthropic's error type for each status of the table (the mapper's statuses)
ANTHROPIC = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
             409: "invalid_request_error", 413: "request_too_large", 422: "invalid_request_error",
             429: "rate_limit_error", 500: "api_error", 501: "api_error", 502: "api_error",
             503: "overloaded_error"}


def test_every_error_class_answers_the_same_status_in_anthropics_shape(loom: Loom) -> None:
    app = create_gateway_app(loom, clients=lambda spec: Failing())
    with serving(app) as base, httpx.Client(base_url=base, timeout=60) as http:
        for i, (exc, status, _, _) in enumerate(TABLE):
            for stream in (False, True):
                got = http.post("/v1/messages", json={
                    "model": "local", "stream": stream, "max_tokens": 5,
                    "messages": [{"role": "user", "content": str(i)}]})
                assert got.status_code == status, (exc, stream, got.text)
                body = got.json()
                assert body["type"] == "error", body
                assert body["error"]["type"] == ANTHROPIC[status], (exc, body)
                if not isinstance(exc, errors.LoomError):
                    assert "secret" not in got.text
        for route in ("/v1/responses", "/v1/messages/count_tokens"):
            bad = http.post(route, content=b"{not json",
                            headers={"content-type": "application/json"})
            assert bad.status_code == 400, (route, bad.text)
    assert loom.trees() == []


def test_content_over_the_limit_is_413_on_every_wire_before_the_model(loom: Loom) -> None:
    """A message over the store's content limit is the mapper's TooLarge (413) on every
    wire, and the model is never asked (it answered 502 before: the model failed first)."""
    asked: list[Any] = []

    class Counting:
        def complete(self, ctx: Any, **_: Any) -> Any:
            asked.append(ctx)
            raise errors.ProviderError("local", "context window exceeded")

    huge = "x" * (loom.max_content_bytes + 1)
    app = create_gateway_app(loom, clients=lambda spec: Counting())
    bodies = {"/v1/chat/completions": {"messages": [{"role": "user", "content": huge}]},
              "/v1/responses": {"input": huge},
              "/v1/messages": {"max_tokens": 5, "messages": [{"role": "user", "content": huge}]}}
    with serving(app) as base, httpx.Client(base_url=base, timeout=120) as http:
        for route, body in bodies.items():
            got = http.post(route, json={"model": "local", **body})
            assert got.status_code == 413, (route, got.text[:300])
    assert asked == [] and loom.trees() == []
