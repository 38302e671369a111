"""Generation over HTTP with the real local model: N alternatives as siblings, their
text streamed as server-sent events before it is stored, and the plain JSON answer."""

from __future__ import annotations

import json

import httpx
import pytest

from loomdb import Loom

pytestmark = [pytest.mark.xdist_group("local-model"), pytest.mark.slow]


def events(body: str) -> list[tuple[str, object]]:
    out = []
    for chunk in body.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in chunk.splitlines())
        out.append((fields["event"], json.loads(fields["data"])))
    return out


def test_generate_streams_alternatives_and_stores_what_it_streamed(
        http: httpx.Client, shared_loom: Loom, name: str) -> None:
    http.post("/api/trees", json={"text": "Say hi.", "session": name})
    with http.stream("POST", f"/api/nodes/{name}/generate",
                     json={"n": 2, "max_tokens": 6, "stream": True}) as r:
        assert r.status_code == 201
        assert r.headers["content-type"].startswith("text/event-stream")
        got = events(r.read().decode())
    kind, last = got[-1]
    assert kind == "done", got[-1]
    first, second = last["nodes"]  # type: ignore[index]
    assert http.get(f"/api/nodes/{first}/siblings").json() == {"nodes": [second]}
    assert http.get(f"/api/nodes/{name}").json()["id"] == first  # the session moved
    assert shared_loom.node(first).provenance["provider"] == "local"
    streamed = {i: "".join(d["delta"] for e, d in got  # type: ignore[index]
                           if e == "token" and d["index"] == i)  # type: ignore[index]
                for i in (0, 1)}
    stored = {shared_loom.node(n).content[0]["text"] for n in (first, second)}
    assert set(streamed.values()) == stored


def test_generate_without_streaming_answers_the_node_ids(http: httpx.Client, name: str) -> None:
    made = http.post("/api/trees", json={"text": "Hello", "session": name}).json()
    r = http.post(f"/api/nodes/{made['node']}/generate", json={"max_tokens": 2})
    assert r.status_code == 201 and len(r.json()["nodes"]) == 1
    assert http.get(f"/api/nodes/{name}").json()["id"] == made["node"]  # by id: nothing moves


def test_a_stream_closed_by_its_client_keeps_what_the_model_wrote(
        http: httpx.Client, shared_loom: Loom, name: str) -> None:
    """The page's Stop closes the stream: the model stops at its next token and what it
    had written is stored, marked incomplete, where the session then points."""
    # greedy: the small model's answer is the same each run (sampled, it now and then
    # ended before the close reached it, and nothing was incomplete)
    shared_loom.new_tree("Count from one to two hundred, in words.", session=name,
                         options={"temperature": 0})
    seen = ""
    with http.stream("POST", f"/api/nodes/{name}/generate",
                     json={"max_tokens": 400, "stream": True}) as r:
        assert r.status_code == 201
        for line in r.iter_lines():
            if line.startswith("data: ") and '"delta"' in line:
                seen += json.loads(line[len("data: "):])["delta"]
                if len(seen) >= 8:
                    break  # leaving the block closes the connection
    node = None
    for _ in range(600):  # the worker stores the answer once the model has stopped
        head = http.get(f"/api/nodes/{name}").json()
        if head["role"] == "assistant":
            node = shared_loom.node(head["id"])
            break
        __import__("time").sleep(0.1)
    assert node is not None, "nothing was stored"
    text = node.content[0]["text"]
    assert text.startswith(seen)
    assert node.provenance.get("incomplete") is True
    assert (node.tokens or 0) < 400
