"""Responses API, logprobs, upstream errors passed through, and the CLI command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from conftest import Live, free_port, serve
from loomdb import Loom

SRC = str(Path(__file__).resolve().parents[2] / "src")


def test_responses_continue_from_previous_response_id(live: Live) -> None:
    client = live.client()
    first = client.responses.create(model="local", input="Name a fruit.", max_output_tokens=3)
    node = live.loom.node(first.id)
    assert node.role == "assistant" and first.output_text == node.content[0]["text"]
    second = client.responses.create(model="local", input="Another?", max_output_tokens=3,
                                     previous_response_id=first.id)
    path = live.loom.path(second.id)
    assert path[:2] == live.loom.path(first.id) and len(path) == 4
    assert live.loom.node(path[2]).content == [{"type": "text", "text": "Another?"}]
    # a chat client re-sending the same conversation lands on the same path
    chat = client.chat.completions.create(model="local", max_tokens=2, messages=[
        {"role": "user", "content": "Name a fruit."},
        {"role": "assistant", "content": first.output_text},
        {"role": "user", "content": "Another?"},
        {"role": "assistant", "content": second.output_text},
        {"role": "user", "content": "And a third?"}])
    assert live.loom.path(chat.id)[:4] == path


def test_responses_unknown_previous_id_is_404(live: Live) -> None:
    import openai

    with pytest.raises(openai.NotFoundError):
        live.client().responses.create(model="local", input="x",
                                       previous_response_id="01ARZ3NDEKTSV4RRFFQ69G5FAV")
    assert live.loom.trees() == []


def test_logprobs_are_returned_and_kept_compactly(live: Live) -> None:
    reply = live.client().chat.completions.create(
        model="local", messages=[{"role": "user", "content": "Say yes."}], max_tokens=4,
        logprobs=True, top_logprobs=3)
    given = reply.choices[0].logprobs.content
    assert given and len(given[0].top_logprobs) >= 1
    node = live.loom.node(reply.id)
    kept = node.provenance["logprobs"]  # type: ignore[index]
    assert "".join(kept["tokens"]) == node.content[0]["text"]
    assert kept["logprobs"][0] == pytest.approx(given[0].logprob, abs=1e-4)
    assert all(len(top) >= 1 for top in kept["top"])
    # not in the content: the same text without logprobs has the same content id
    plain = live.loom.append(node.parent, node.content[0]["text"], role="assistant")
    assert plain.content_id == node.content_id


class _Upstream(BaseHTTPRequestHandler):
    """A cloud API that refuses: 429 with OpenAI's error body."""

    def do_POST(self) -> None:  # noqa: N802 - the http.server hook
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body = json.dumps({"error": {"message": "slow down", "type": "rate_limit_error",
                                     "param": None, "code": "rate_limited"}}).encode()
        self.send_response(429)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def refusing_upstream() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), _Upstream)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_upstream_errors_pass_through_and_write_nothing(loom: Loom, refusing_upstream: str) -> None:
    import openai

    from loomdb.front import Runtime
    from loomdb.gateway import create_gateway_app
    from loomdb.providers.config import parse_config

    config = parse_config({"models": {"cloud": {
        "provider": "openai", "model": "gpt-x", "base_url": refusing_upstream,
        "api_key_env": "", "max_retries": 0}}})
    for base in serve(create_gateway_app(loom, runtime=Runtime(config=config))):
        client = openai.OpenAI(base_url=base + "/v1", api_key="unused", max_retries=0)
        for stream in (False, True):
            with pytest.raises(openai.RateLimitError) as caught:
                client.chat.completions.create(
                    model="cloud", stream=stream, messages=[{"role": "user", "content": "hi"}])
            assert "slow down" in caught.value.message
            assert caught.value.body["type"] == "rate_limit_error"  # type: ignore[index]
    assert loom.trees() == []


def run_cli(db: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.run([sys.executable, "-m", "loomdb", "--db", db, *args], env=env,
                          capture_output=True, text=True, timeout=600)


def test_generate_and_show_logprobs_in_the_cli(tmp_path: Path) -> None:
    db = str(tmp_path / "store")
    assert run_cli(db, "new", "--text", "Say hi.", "--session", "s").returncode == 0
    out = run_cli(db, "generate", "s", "--max-tokens", "3", "--logprobs", "2", "--json")
    assert out.returncode == 0, out.stderr
    node = json.loads(out.stdout)["nodes"][0]
    shown = run_cli(db, "show", node, "--logprobs", "--json")
    assert shown.returncode == 0, shown.stderr
    tokens = json.loads(shown.stdout)["tokens"]
    assert tokens and all(0 < t["probability"] <= 1 and len(t["top"]) >= 1 for t in tokens)
    text = run_cli(db, "show", node, "--logprobs")
    assert text.stdout.splitlines()[0].split()[:2] == ["token", "prob"]
    bad = run_cli(db, "show", "s~1", "--logprobs")
    assert bad.returncode == 2 and "no logprobs" in bad.stderr
    # the shown logprobs are checked against the raw response the chain covers
    import loomdb

    with loomdb.open(db) as lm, lm.backend.transaction():
        gen = lm.node(node).provenance["generation"]  # type: ignore[index]
        lm.backend.execute("UPDATE generations SET raw_response = replace(raw_response, "
                           "'\"logprob\": -', '\"logprob\": -1') WHERE id = ?", (gen,))
    tampered = run_cli(db, "show", node, "--logprobs")
    assert tampered.returncode == 2 and "raw response" in tampered.stderr
    assert run_cli(db, "generate", "s", "--logprobs", "50").returncode == 2


def test_the_gateway_command_serves_the_store(tmp_path: Path) -> None:
    import httpx

    port = free_port()
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.Popen([sys.executable, "-m", "loomdb", "--db", str(tmp_path / "store"),
                             "gateway", "--port", str(port)], env=env,
                            stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(300):
            try:
                models = httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=1).json()
                break
            except httpx.TransportError:
                import time

                time.sleep(0.1)
        assert "local" in [m["id"] for m in models["data"]]
    finally:
        proc.terminate()
        proc.wait(10)
    refused = run_cli(str(tmp_path / "store"), "gateway", "--host", "0.0.0.0")
    assert refused.returncode == 2 and "loopback" in refused.stderr


def test_completions_grow_a_buffer_tree(live: Live) -> None:
    client = live.client()
    first = client.completions.create(model="local", prompt="Once upon a time", max_tokens=3)
    tree = live.loom.tree(first.id)
    assert tree.mode == "buffer"
    from loomdb.buffer import text

    assert text(live.loom, first.id) == "Once upon a time" + first.choices[0].text
    document = "Once upon a time" + first.choices[0].text + " and then"
    second = client.completions.create(model="local", prompt=document, max_tokens=3)
    path = live.loom.path(second.id)
    assert path[:2] == live.loom.path(first.id) and len(path) == 4
    assert live.loom.node(path[2]).content == [{"type": "text", "text": " and then"}]
    again = client.completions.create(model="local", prompt=document, max_tokens=3, n=2)
    assert sorted(live.loom.siblings(again.id)) == sorted(
        [second.id, again.loomdb["nodes"][1]])  # type: ignore[attr-defined]
    assert live.loom.tree(tree.id).nodes == 6
