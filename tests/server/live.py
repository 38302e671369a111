"""A real uvicorn server on a free loopback port, in a thread, for the HTTP tests."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import uvicorn


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """Serve `app` on 127.0.0.1 until the block ends; yields its base URL."""
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                            ws="none", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def must(r: httpx.Response, status: int = 200) -> Any:
    """The answer's JSON, after checking its status (the body shown when it differs)."""
    assert r.status_code == status, (r.status_code, r.text)
    return r.json()


def client(base: str, token: str | None = None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=base, headers=headers, timeout=120)


@contextmanager
def serve_command(store: str, env: dict[str, str]) -> Iterator[tuple[Any, httpx.Client]]:
    """A real `loomdb serve --json` process over `store` on a free loopback port, and a
    client of it once it answers; the process ends with the block."""
    import json
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "loomdb", "--db", store, "serve", "--port", str(free_port()),
         "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        base = json.loads(proc.stdout.readline())["url"].rstrip("/")
        deadline = time.monotonic() + 60
        with httpx.Client(base_url=base, timeout=300) as http:
            while True:
                try:
                    if http.get("/api/trees").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert proc.poll() is None and time.monotonic() < deadline, proc.stderr
                time.sleep(0.1)
            yield proc, http
    finally:
        proc.terminate()
        proc.wait(30)

