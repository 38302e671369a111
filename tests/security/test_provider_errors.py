"""A model endpoint's credentials never show (issue 22, item 12): a `base_url` with a
user and password, a key in its query, and the API key sent as Authorization stay out
of error messages (library, CLI, HTTP API, gateway), out of the log lines of the SDK
and its HTTP library, and out of what the store records. The endpoints are real: one
that refuses connections, and a real HTTP server on loopback that answers 401 quoting
back the URL and the Authorization header it got, as some proxies do."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import loomdb
from helpers import row_counts
from loomdb import Loom, ProviderError
from loomdb.providers.config import ProvidersConfig, parse_config
from loomdb.server import create_app
from loopback_json import json_server

sys.path.insert(0, str(Path(__file__).parent.parent / "server"))
from live import free_port, serving  # noqa: E402

USER, PASSWORD, QUERY_KEY, API_KEY = "opsuser", "hunter2-pass", "QUERYSECRET42", "sk-test-KEYSECRET99"
SECRETS = (PASSWORD, QUERY_KEY, API_KEY, f"{USER}:")


def _echo(path: str, headers: Any, body: Any) -> tuple[int, Any]:
    """Refuses every call, quoting the request's path and Authorization header."""
    return 401, {"error": {"message": f"bad credentials for {path} "
                           f"(Authorization: {headers.get('Authorization')})",
                           "type": "invalid_request_error"}}


@pytest.fixture(scope="module")
def echo_port() -> Iterator[int]:
    with json_server(_echo) as port:
        yield port


def _config(port: int) -> ProvidersConfig:
    url = f"http://{USER}:{PASSWORD}@127.0.0.1:{port}/v1?key={QUERY_KEY}"
    return parse_config({"default": "leaky", "models": {"leaky": {
        "provider": "openai", "base_url": url, "model": "m", "api_key_env": "LEAKY_KEY",
        "max_retries": 0, "timeout": 5}}})


@pytest.fixture(params=["refused", "echo"])
def port(request: pytest.FixtureRequest, echo_port: int) -> int:
    return free_port() if request.param == "refused" else echo_port


def _clean(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, (secret, text)


def test_library_messages_and_logs_hide_the_endpoint_secrets(
        loom: Loom, port: int, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("LEAKY_KEY", API_KEY)
    loom.new_tree("hi", session="s")
    before = row_counts(loom)
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ProviderError) as caught:
        loom.generate("s", models=["leaky"], config=_config(port), max_tokens=4)
    _clean(str(caught.value))
    assert "127.0.0.1" in str(caught.value)  # where it went is still said
    for record in caplog.records:
        _clean(record.getMessage())
    assert any(r.name.startswith(("httpx", "openai")) for r in caplog.records)
    assert row_counts(loom) == before  # a failed call records nothing


def test_http_api_gateway_and_cli_hide_them(store_url: str, port: int,
                                            monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    monkeypatch.setenv("LEAKY_KEY", API_KEY)
    config = _config(port)
    with loomdb.open(store_url) as lm, serving(create_app(lm, config=config)) as base:
        lm.new_tree("hi", session="s")
        headers = {"Host": base.removeprefix("http://"), "Content-Type": "application/json"}
        with httpx.Client(base_url=base, timeout=60, headers=headers) as http:
            answers = [
                http.post("/api/nodes/s/generate", json={"models": ["leaky"], "max_tokens": 4}),
                http.post("/v1/chat/completions", json={
                    "model": "leaky", "messages": [{"role": "user", "content": "hi"}]}),
            ]
        for answer in answers:
            assert answer.status_code in (401, 502), answer.text
            _clean(answer.text)
    toml = tmp_path / "providers.toml"
    url = f"http://{USER}:{PASSWORD}@127.0.0.1:{port}/v1?key={QUERY_KEY}"
    toml.write_text(f'default = "leaky"\n[models.leaky]\nprovider = "openai"\n'
                    f'base_url = "{url}"\nmodel = "m"\napi_key_env = "LEAKY_KEY"\n'
                    f"max_retries = 0\ntimeout = 5\n")
    monkeypatch.setenv("LOOMDB_PROVIDERS", str(toml))
    from test_bad_input import run_cli

    code, out, err = run_cli(store_url, "generate", "s", "-m", "leaky", "--max-tokens", "4",
                             "--json")
    assert code == 2, err
    _clean(out + err)
