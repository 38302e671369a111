"""Live updates over HTTP (issue 24, point 12): a tree's event stream tells of a write
made through this server and of one made by another process (the CLI), a live
link's stream of its session's moves; a snapshot's stream tells nothing until the link
is revoked; streams are limited per caller and refused in one line past it.

Nothing here waits for a duration: each read blocks until the server sends the next
event (a test that got none would fail on the client's read timeout)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
from live import client

from loomdb import Loom
from loomdb.server.live import MAX_PER_CALLER

SRC = str(Path(__file__).resolve().parents[2] / "src")


def events(response: httpx.Response) -> Iterator[tuple[str, Any]]:
    """The stream's events, (name, data), comments and `retry` skipped."""
    kind, data = "message", []
    for line in response.iter_lines():
        if line == "":
            if data:
                yield kind, json.loads("\n".join(data))
            kind, data = "message", []
        elif line.startswith("event:"):
            kind = line[len("event:"):].strip()
        elif line.startswith("data:"):
            data.append(line[len("data:"):].strip())


def append(base: str, at: str, text: str) -> str:
    with client(base) as h:
        r = h.post(f"/api/nodes/{at}/append", json={"text": text, "role": "user"})
        assert r.status_code == 201, r.text
        return str(r.json()["node"])


def test_a_tree_stream_tells_of_writes_here_and_from_another_process(
        served_store: tuple[str, Loom, str], name: str) -> None:
    url, lm, base = served_store
    tree, _ = lm.new_tree("hello", session=name)
    with client(base) as h, h.stream("GET", f"/api/trees/{tree.id}/events") as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        seen = events(r)
        kind, first = next(seen)
        assert kind == "ready" and first["nodes"] == 1 and first["refs"] == {name: tree.root}
        node = append(base, name, "from this server")
        kind, now = next(seen)
        assert kind == "change" and now["nodes"] == 2 and now["refs"][name] == node
        done = subprocess.run([sys.executable, "-m", "loomdb", "--db", url, "add", name,
                               "--role", "user", "--text", "from the CLI", "--json"],
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONPATH": SRC}, check=False)
        assert done.returncode == 0, done.stderr
        kind, now = next(seen)
        assert kind == "change" and now["nodes"] == 3
        assert now["refs"][name] == json.loads(done.stdout)["node"]


def test_a_live_link_moves_and_a_snapshot_does_not(served: tuple[Loom, str], name: str) -> None:
    lm, base = served
    _, root = lm.new_tree("hello", session=name)
    _, live = lm.shares.create(name, live=True)
    snap, fixed = lm.shares.create(root.id)
    with client(base) as h, h.stream("GET", f"/api/s/{live}/events") as moving, \
            h.stream("GET", f"/api/s/{fixed}/events") as still:
        on_live, on_snap = events(moving), events(still)
        assert next(on_live) == ("ready", {"head": root.id})
        assert next(on_snap) == ("ready", {"head": root.id})
        node = append(base, name, "more")
        assert next(on_live) == ("change", {"head": node})
        lm.shares.revoke(snap.id)
        assert next(on_snap) == ("gone", {})  # and no change before it


def test_streams_are_limited_per_caller(served: tuple[Loom, str], name: str) -> None:
    lm, base = served
    tree, _ = lm.new_tree("hello", session=name)
    with ExitStack() as open_, client(base) as h:
        for _ in range(MAX_PER_CALLER):
            r = open_.enter_context(h.stream("GET", f"/api/trees/{tree.id}/events"))
            assert r.status_code == 200
        refused = h.get(f"/api/trees/{tree.id}/events")
        assert refused.status_code == 400
        assert "at most" in refused.json()["error"]["message"]
    with client(base) as h, h.stream("GET", f"/api/trees/{tree.id}/events") as again:
        assert again.status_code == 200  # closed streams are given back


def test_an_unknown_tree_has_no_stream(served: tuple[Loom, str]) -> None:
    with client(served[1]) as h:
        assert h.get("/api/trees/01NOSUCHTREE00000000000000/events").status_code == 404


def test_the_approvals_stream_tells_of_a_call_asked_for_and_decided(
        served: tuple[Loom, str], name: str) -> None:
    """A tool call left waiting for a person (as an agent's turn leaves it) and then
    decided changes the caller's approvals stamp (what the inbox follows)."""
    from loomdb.agents import AGENTS

    lm, base = served
    lm.new_tree("Check the weather", session=name)
    call = lm.append(name, [{"type": "tool_use", "id": "c1", "name": "weather", "input": {}}],
                     role="assistant")
    with client(base) as h, h.stream("GET", "/api/events") as r:
        seen = events(r)
        kind, first = next(seen)
        assert kind == "ready" and [call.id, "pending"] not in first["pending"]
        with lm.unit(AGENTS) as db:
            db.execute("INSERT INTO agent_tool_calls (node, call_id, tree, tool, input, state, "
                       "run, created_at, updated_at) VALUES (?, 'c1', ?, 'weather', '[]', "
                       "'pending', ?, 'now', 'now')",
                       (call.id, call.tree, json.dumps({"session": name, "persona": None})))
        kind, now = next(seen)
        assert kind == "change" and [call.id, "pending"] in now["pending"]
        with lm.unit(AGENTS) as db:
            db.execute("UPDATE agent_tool_calls SET state = 'denied' WHERE node = ?", (call.id,))
        kind, now = next(seen)
        assert kind == "change" and [call.id, "pending"] not in now["pending"]


def test_the_limits_count_per_caller_and_in_all() -> None:
    from loomdb.errors import InvalidInput
    from loomdb.server.live import Streams

    streams = Streams(per_caller=2, overall=3)
    streams.take("a")
    streams.take("a")
    try:
        streams.take("a")
        raise AssertionError("a third stream of one caller was taken")
    except InvalidInput as refused:
        assert "at most 2 open at once per caller" in str(refused)
    streams.take("b")
    try:
        streams.take("c")
        raise AssertionError("a fourth stream was taken")
    except InvalidInput as refused:
        assert "3 open already" in str(refused)
    streams.give_back("a")
    streams.take("c")
    assert streams.open == {"a": 1, "b": 1, "c": 1}
