"""A body over the limit gets a refusal the client can read (issue 32, item 12), from a
real client over a live server on loopback.

The guard answers 413 before reading a body it will not take; it then reads and drops
the rest (up to a bound) before closing, since a connection closed with bytes unread
is reset by the system, and a client still sending then sees the reset, not the
answer. On the main this was written against, an 80 MB JSON body to an API route got
`ConnectionResetError` (httpx: `WriteError` / `RemoteProtocolError`) mid-send."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from live import serving

import loomdb
from loomdb.server import create_app

MB = 1024 * 1024


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder: Path = tmp_path_factory.mktemp("refusal")
    with loomdb.open(str(folder / "store")) as lm, serving(create_app(lm)) as url:
        yield url


def refused_413(r: httpx.Response) -> None:
    assert r.status_code == 413, (r.status_code, r.text[:300])
    assert "LOOMDB_LIMIT_REQUEST_BODY" in r.json()["error"]["message"]


def test_a_declared_body_over_the_limit_reads_413_on_the_gateway(base: str) -> None:
    body = b'{"model": "x", "messages": "' + b"x" * (33 * MB) + b'"}'
    with httpx.Client(base_url=base, timeout=120) as c:
        r = c.post("/v1/chat/completions", content=body,
                   headers={"content-type": "application/json"})
        assert r.status_code == 413 and r.json()["error"]["code"] == "TooLarge", r.text[:300]
        assert c.get("/api/health").status_code == 200  # and the server still serves


def test_a_streamed_body_found_too_large_while_read_reads_413(base: str) -> None:
    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit is found while reading
        yield b'{"text": "'
        for _ in range(40):
            yield b"x" * MB
        yield b'"}'

    with httpx.Client(base_url=base, timeout=120) as c:
        refused_413(c.post("/api/trees", content=chunks(),
                           headers={"content-type": "application/json"}))
        assert json.loads(c.get("/api/trees").text)["trees"] == []  # nothing written


def test_a_raw_client_sending_80_mb_reads_413_after_sending(base: str) -> None:
    """A plain socket client that sends its whole request, then reads: the send
    completes and the answer is there (closing with the body unread reset it)."""
    import socket

    host, port = base.removeprefix("http://").split(":")
    size = 80 * MB
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        sock.sendall(b"POST /api/trees HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Content-Type: application/json\r\n"
                     + f"Content-Length: {size}\r\n\r\n".encode())
        chunk = b"x" * MB
        for _ in range(size // MB):
            sock.sendall(chunk)
        answer = b"".join(iter(lambda: sock.recv(65536), b""))  # to the server's close
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413"), answer[:200]
    assert "LOOMDB_LIMIT_REQUEST_BODY" in json.loads(body)["error"]["message"]
