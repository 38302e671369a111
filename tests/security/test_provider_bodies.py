"""Options do not spend the operator's money (issue 32, item 4), over a live server on
both backends, against a real OpenAI-compatible endpoint on loopback that records every
body it is sent (the one part that cannot run for real: a paid provider).

Over HTTP a provider body is built from an allow-list (`providers.served.served_body`):
a thread's options and provider tables may set sampling fields, never `n`, `best_of`,
`service_tier`, `reasoning_effort`, token maxima or keys of their own; the token
maximum is the request's own (else the alias's, else `limits.answer_tokens`), and loom
mode's one-token probe stays one token. On the main this was written against,
`openai.n: 64` was sent (64 completions billed), and so was every other key below.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from agent_calls import PERSONA, Tally
from live import client, must, serving

from loomdb import Loom
from loomdb.agents.identities import bind_session, set_persona
from loomdb.agents.loop import run_turn
from loomdb.front import Runtime
from loomdb.limits import DEFAULT
from loomdb.providers.config import ProvidersConfig, parse_config
from loomdb.server import create_app

#: what a thread's options may carry to spend more than asked (each shape of the class)
COSTLY: dict[str, Any] = {
    "openai": {"n": 64, "best_of": 8, "service_tier": "priority",
               "max_completion_tokens": 100000, "reasoning_effort": "high",
               "x_vendor_boost": True, "max_tokens": 100000},
    "service_tier": "priority", "reasoning_effort": "high", "max_tokens": 100000,
    "max_completion_tokens": 100000, "logit_bias": {"50256": 100}, "user": "someone",
    "temperature": 0.5, "seed": 7, "stop": ["\n\n"],
}
NEVER = ("n", "best_of", "service_tier", "reasoning_effort", "x_vendor_boost",
         "logit_bias", "user", "max_completion_tokens")


class _Recorder(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint answering at once, keeping every body."""

    bodies: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).bodies.append(body)
        if self.path.endswith("/chat/completions"):
            message: dict[str, Any] = {"role": "assistant", "content": "ok"}
            if body.get("tools") and body["messages"][-1]["role"] != "tool":  # an agent's step
                message = {"role": "assistant", "content": None, "tool_calls": [{
                    "id": "call_1", "type": "function", "function": {
                        "name": "tally", "arguments": '{"what": "visit"}'}}]}
            answer: dict[str, Any] = {
                "id": "c1", "object": "chat.completion", "created": 1, "model": "m",
                "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}
        else:
            answer = {"id": "t1", "object": "text_completion", "created": 1, "model": "m",
                      "choices": [{"index": 0, "finish_reason": "length", "text": " ok",
                                   "logprobs": {"tokens": [" ok"], "token_logprobs": [-0.1],
                                                "top_logprobs": [{" ok": -0.1, " no": -2.0}],
                                                "text_offset": [0]}}],
                      "usage": {"prompt_tokens": 3, "completion_tokens": 1,
                                "total_tokens": 4}}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def world(served: tuple[Loom, str], tmp_path_factory: pytest.TempPathFactory,
          ) -> Iterator[tuple[str, ProvidersConfig, Tally]]:
    """(the server's base URL, its providers config, the tally tool its turns may run)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    config = parse_config({"default": "paid", "models": {"paid": {
        "provider": "openai", "model": "m", "api_key_env": "", "max_retries": 0, "timeout": 10,
        "base_url": f"http://127.0.0.1:{server.server_address[1]}/v1"}}})
    tally = Tally(tmp_path_factory.mktemp("tally"))
    try:
        with serving(create_app(served[0], runtime=Runtime(config=config,
                                                           tools=tally.config))) as url:
            yield url, config, tally
    finally:
        server.shutdown()
        thread.join(10)


@pytest.fixture
def base(world: tuple[str, ProvidersConfig, Tally]) -> str:
    return world[0]


def sent() -> dict[str, Any]:
    """The last body the endpoint got."""
    return _Recorder.bodies[-1]


def allowed(body: dict[str, Any], most: int) -> None:
    for key in NEVER:
        assert key not in body, (key, body)
    assert body["max_tokens"] <= most, body
    assert body["temperature"] == 0.5 and body["seed"] in (7, 8)  # sampling still goes
    # (alternative i of a seeded request is sent seed + i)


def thread_with(c: httpx.Client, name: str, mode: str = "dialogue") -> None:
    must(c.post("/api/trees", json={"text": "question", "session": name, "mode": mode}), 201)
    must(c.post(f"/api/nodes/{name}/append",
                json={"role": "user", "text": " more", "options": COSTLY}), 201)


@pytest.mark.parametrize("asked", [None, 16], ids=["no-maximum", "maximum-16"])
def test_generate_sends_only_allowed_fields(base: str, tag: str, asked: int | None) -> None:
    with client(base) as c:
        thread_with(c, f"g-{tag}")
        body: dict[str, Any] = {"models": ["paid"]}
        if asked is not None:
            body["max_tokens"] = asked
        must(c.post(f"/api/nodes/g-{tag}/generate", json=body), 201)
    allowed(sent(), asked or DEFAULT.answer_tokens)
    assert "messages" in sent() and sent().get("max_tokens") == (asked or DEFAULT.answer_tokens)


def test_n_is_the_requests_own_one_body_per_answer(base: str, tag: str) -> None:
    with client(base) as c:
        thread_with(c, f"n-{tag}")
        before = len(_Recorder.bodies)
        out = must(c.post(f"/api/nodes/n-{tag}/generate", json={"n": 2, "max_tokens": 5}), 201)
    assert len(out["nodes"]) == 2 and len(_Recorder.bodies) - before == 2
    for body in _Recorder.bodies[before:]:
        allowed(body, 5)


def test_a_buffer_tree_sends_only_allowed_fields(base: str, tag: str) -> None:
    with client(base) as c:
        thread_with(c, f"b-{tag}", mode="buffer")
        must(c.post(f"/api/nodes/b-{tag}/generate", json={"max_tokens": 9}), 201)
    assert "prompt" in sent()
    allowed(sent(), 9)


def test_loom_modes_probe_stays_one_token(base: str, tag: str) -> None:
    with client(base) as c:
        thread_with(c, f"p-{tag}", mode="buffer")
        out = must(c.post(f"/api/buffer/p-{tag}/next", json={"top": 2}))
    assert [t["token"] for t in out["tokens"]] == [" ok", " no"]
    allowed(sent(), 1)
    assert sent()["max_tokens"] == 1 and "prompt" in sent() and sent()["logprobs"]


@pytest.mark.parametrize("path,body", [
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}],
                              "max_completion_tokens": 12}),
    ("/v1/responses", {"input": "hi", "max_output_tokens": 12}),
    ("/v1/completions", {"prompt": "Once upon", "max_tokens": 12}),
], ids=["chat", "responses", "completions"])
def test_the_gateway_sends_only_allowed_fields(base: str, path: str,
                                               body: dict[str, Any]) -> None:
    costly = {"model": "paid", **body, "reasoning_effort": "high", "service_tier": "priority",
              "logit_bias": {"1": 5}, "temperature": 0.5, "seed": 7, "best_of": 3}
    with httpx.Client(base_url=base, timeout=60) as c:
        r = c.post(path, json=costly)
    assert r.status_code == 200, r.text
    allowed(sent(), 12)


def test_an_agents_turn_resumed_over_http_sends_only_allowed_fields(
        served: tuple[Loom, str], world: tuple[str, ProvidersConfig, Tally], tag: str) -> None:
    lm, (base, config, tally) = served[0], world
    set_persona(lm, PERSONA, approve=["tally"], system="Count visits with care.")
    lm.new_tree("Count one visit.", session=f"a-{tag}",
                options={**tally.options(), **COSTLY})
    bind_session(lm, f"a-{tag}", persona=PERSONA)
    turn = run_turn(lm, f"a-{tag}", max_steps=2, config=config, tools=tally.config)
    assert turn.pending is not None, turn  # in process: the operator's own call
    with client(base) as c:  # approved over HTTP: the resumed step is the caller's
        done = must(c.post(f"/api/agents/pending/{turn.pending}/approve"))
    assert done["nodes"] and sent()["messages"][-1]["role"] == "tool"
    allowed(sent(), DEFAULT.answer_tokens)
