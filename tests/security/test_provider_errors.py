"""A model endpoint's credentials never show (issue 22, item 12): a `base_url` with a
user and password, a key in its query, and the API key sent as Authorization stay out
of error messages (library, CLI, HTTP API, gateway), out of the log lines of the SDK
and its HTTP library, and out of what the store records. The endpoints are real: one
that refuses connections, and a real HTTP server on loopback that answers 401 quoting
back the URL and the Authorization header it got, as some proxies do."""

from __future__ import annotations

import json
import logging
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

import loomdb
from helpers import row_counts
from loomdb import Loom, ProviderError
from loomdb.providers.config import ProvidersConfig, parse_config
from loomdb.server import create_app

sys.path.insert(0, str(Path(__file__).parent.parent / "server"))
from live import free_port, serving  # noqa: E402

USER, PASSWORD, QUERY_KEY, API_KEY = "opsuser", "hunter2-pass", "QUERYSECRET42", "sk-test-KEYSECRET99"
SECRETS = (PASSWORD, QUERY_KEY, API_KEY, f"{USER}:")


class _Echo(BaseHTTPRequestHandler):
    """Refuses every call, quoting the request's path and Authorization header; each
    call's (path, Authorization) is kept in `seen`."""

    seen: list[tuple[str, str | None]] = []

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        self.seen.append((self.path, self.headers.get("Authorization")))
        body = json.dumps({"error": {"message": f"bad credentials for {self.path} "
                                     f"(Authorization: {self.headers.get('Authorization')})",
                                     "type": "invalid_request_error"}}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def echo_port() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        thread.join(10)


def _config(port: int) -> ProvidersConfig:
    url = f"http://{USER}:{PASSWORD}@127.0.0.1:{port}/v1?key={QUERY_KEY}"
    return parse_config({"default": "leaky", "models": {"leaky": {
        "provider": "openai", "base_url": url, "model": "m", "api_key_env": "LEAKY_API_KEY",
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
    monkeypatch.setenv("LEAKY_API_KEY", API_KEY)
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
    monkeypatch.setenv("LEAKY_API_KEY", API_KEY)
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
                    f'base_url = "{url}"\nmodel = "m"\napi_key_env = "LEAKY_API_KEY"\n'
                    f"max_retries = 0\ntimeout = 5\n")
    monkeypatch.setenv("LOOMDB_PROVIDERS", str(toml))
    from test_bad_input import run_cli

    code, out, err = run_cli(store_url, "generate", "s", "-m", "leaky", "--max-tokens", "4",
                             "--json")
    assert code == 2, err
    _clean(out + err)
