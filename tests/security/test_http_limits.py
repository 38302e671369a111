"""Request limits over HTTP (issue 22, item 5): a JSON body over `request_body`, an
upload over `upload` (declared by Content-Length, or only found while streaming), a
JSON body nested deeper than `json_depth`: each refused with one line (413 / 400),
nothing written, the server alive. The limits are small here so the test sends little;
the defaults (32 MB, 1 GB, 64) and `LOOMDB_LIMIT_<NAME>` read by `loomdb serve` are
checked too, through a real `loomdb serve` process. On the main this was written
against, none of these was refused.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from live import client, free_port, serving

from loomdb import Loom
from loomdb.limits import KB, Limits
from loomdb.server import create_app

SMALL = Limits(request_body=4 * KB, upload=8 * KB, json_depth=16)


@pytest.fixture(scope="module")
def small(served: tuple[Loom, str]) -> Iterator[str]:
    """A second server over the same store, with small limits."""
    from loomdb.guard import Trust

    with serving(create_app(served[0], trust=Trust(limits=SMALL))) as base:
        yield base


def one_line(r: httpx.Response, status: int) -> str:
    assert r.status_code == status, (r.status_code, r.text[:300])
    message = r.json()["error"]["message"]
    assert "\n" not in message and "Traceback" not in r.text
    return str(message)


def chunks(data: bytes, size: int = 1024) -> Iterator[bytes]:
    """A body streamed without a Content-Length (chunked transfer)."""
    for i in range(0, len(data), size):
        yield data[i:i + size]


def test_a_json_body_over_the_limit_is_413_and_writes_nothing(served: tuple[Loom, str],
                                                              small: str) -> None:
    lm = served[0]
    before = len(lm.trees())
    big = json.dumps({"text": "x" * (5 * KB)}).encode()
    with client(small) as c:
        msg = one_line(c.post("/api/trees", content=big,
                              headers={"content-type": "application/json"}), 413)
        assert "LOOMDB_LIMIT_REQUEST_BODY" in msg
        one_line(c.post("/api/trees", content=chunks(big),
                        headers={"content-type": "application/json"}), 413)
        assert c.get("/api/trees").status_code == 200  # alive
        assert c.post("/api/trees", json={"text": "small"}).status_code == 201
    assert len(lm.trees()) == before + 1


def test_an_upload_over_the_limit_is_413_and_imports_nothing(served: tuple[Loom, str],
                                                             small: str) -> None:
    lm = served[0]
    before = len(lm.trees())
    convo = [{"title": "t", "mapping": {}, "pad": "x" * (9 * KB)}]
    data = json.dumps(convo).encode()
    raw = {"content-type": "application/octet-stream"}
    with client(small) as c:
        assert "LOOMDB_LIMIT_UPLOAD" in one_line(
            c.post("/api/import", content=data, headers=raw), 413)
        one_line(c.post("/api/import", content=chunks(data), headers=raw), 413)
        assert c.get("/api/trees").status_code == 200
    assert len(lm.trees()) == before


def nested(depth: int) -> str:
    return '{"text": "x", "options": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


def test_json_nested_too_deep_is_400_before_it_is_built(served: tuple[Loom, str],
                                                        small: str) -> None:
    lm = served[0]
    before = len(lm.trees())
    with client(small) as c:
        # within the size limit, far past the depth: refused by the depth, not parsed
        deep = "[" * 1500 + "]" * 1500
        msg = one_line(c.post("/api/trees", content=deep,
                              headers={"content-type": "application/json"}), 400)
        assert "deeper than 16" in msg
        one_line(c.post("/api/trees", content=nested(17),
                        headers={"content-type": "application/json"}), 400)
        # brackets inside strings are text, not depth
        text = json.dumps({"text": "[" * 100})
        assert c.post("/api/trees", content=text,
                      headers={"content-type": "application/json"}).status_code == 201
        # at the limit: past the guard (the schema then answers)
        assert c.post("/api/trees", content=nested(16),
                      headers={"content-type": "application/json"}).status_code == 422
    assert len(lm.trees()) == before + 1


def test_the_defaults_hold_on_the_served_app(served: tuple[Loom, str]) -> None:
    """The default server refuses a declared body over 32 MB without reading it."""
    _, base = served
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        # only the headers: a body this size is never sent, the answer comes first
        sock.sendall(b"POST /api/trees HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Content-Type: application/json\r\n"
                     + f"Content-Length: {32 * 1024 * 1024 + 1}\r\n\r\n".encode())
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            got = sock.recv(65536)
            if not got:
                break
            answer += got
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413"), answer[:200]
    assert "LOOMDB_LIMIT_REQUEST_BODY" in json.loads(body)["error"]["message"]
    with client(base) as c:
        deep = "[" * 65 + "]" * 65
        one_line(c.post("/api/trees", content=deep,
                        headers={"content-type": "application/json"}), 400)


def test_loomdb_serve_reads_the_limits_from_the_environment(tmp_path: Path) -> None:
    """`loomdb serve` reads LOOMDB_LIMIT_REQUEST_BODY and LOOMDB_ALLOW_HOSTS at start
    (allowed names on a store with users only: tests/security/test_allow_hosts.py)."""
    import loomdb

    with loomdb.open(str(tmp_path / "store")) as lm:
        _, token = lm.as_(lm.operator).users.add("op")
    port = free_port()
    env = {**os.environ, "LOOMDB_LIMIT_REQUEST_BODY": "1KB",
           "LOOMDB_ALLOW_HOSTS": "loom.example"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "loomdb", "--db", str(tmp_path / "store"), "serve",
         "--port", str(port), "--json"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        json.loads(proc.stdout.readline())  # the start line: the app is built
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:  # uvicorn binds right after the start line
            try:
                httpx.get(base + "/api/trees", timeout=5)
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline and proc.poll() is None, "no server"
                time.sleep(0.05)
        with client(base, token) as c:
            big = json.dumps({"text": "x" * 2000})
            one_line(c.post("/api/trees", content=big,
                            headers={"content-type": "application/json"}), 413)
            assert c.post("/api/trees", json={"text": "ok"}).status_code == 201
            assert c.get("/api/trees", headers={"host": "loom.example"}).status_code == 200
            one_line(c.get("/api/trees", headers={"host": "evil.example"}), 400)
    finally:
        proc.terminate()
        proc.wait(10)
