"""Generation over HTTP with the real local model: alternatives as siblings, and the
same text streamed as server-sent events before it is stored."""

from __future__ import annotations

import json

import httpx
import pytest

from loomdb import Loom

pytestmark = pytest.mark.xdist_group("local-model")


def events(body: str) -> list[tuple[str, object]]:
    out = []
    for chunk in body.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in chunk.splitlines())
        out.append((fields["event"], json.loads(fields["data"])))
    return out


def test_generate_n_alternatives(http: httpx.Client, shared_loom: Loom, name: str) -> None:
    http.post("/api/trees", json={"text": "Say hi.", "session": name})
    r = http.post(f"/api/nodes/{name}/generate", json={"n": 2, "max_tokens": 8})
    assert r.status_code == 201, r.text
    first, second = r.json()["nodes"]
    assert http.get(f"/api/nodes/{first}/siblings").json() == {"nodes": [second]}
    assert http.get(f"/api/nodes/{name}").json()["id"] == first
    assert shared_loom.node(first).provenance["provider"] == "local"


def test_generate_streams_the_text_it_stores(http: httpx.Client, shared_loom: Loom,
                                             name: str) -> None:
    http.post("/api/trees", json={"text": "Count to three.", "session": name})
    with http.stream("POST", f"/api/nodes/{name}/generate",
                     json={"n": 1, "max_tokens": 12, "stream": True}) as r:
        assert r.status_code == 201
        assert r.headers["content-type"].startswith("text/event-stream")
        got = events(r.read().decode())
    tokens = [d for e, d in got if e == "token"]
    kind, last = got[-1]
    assert kind == "done" and tokens
    node = shared_loom.node(last["nodes"][0])  # type: ignore[index]
    streamed = "".join(t["delta"] for t in tokens)  # type: ignore[index]
    assert streamed == node.content[0]["text"]
