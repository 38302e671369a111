"""A live gateway: uvicorn on a loopback port over a fresh store of each backend, with
the local model (SmolLM2 through llama.cpp) behind the `local` alias."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from loomdb import Loom


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Live:
    """A running gateway: its /v1 URL and the Loom it records into."""

    url: str
    loom: Loom

    def client(self, **headers: str) -> Any:
        from openai import OpenAI

        return OpenAI(base_url=self.url, api_key="unused", max_retries=0, timeout=120,
                      default_headers=headers or None)


@pytest.fixture(scope="session")
def local_model() -> None:
    """Load SmolLM2 once for the session (first use would otherwise time a request)."""
    from loomdb.providers.config import resolve_model
    from loomdb.providers.local import LocalClient, load_model

    load_model(LocalClient(resolve_model("local")).path,
               n_threads=os.environ.get("LOOMDB_MODEL_THREADS"))


def serve(app: Any) -> Iterator[str]:
    """Run an ASGI app with uvicorn on loopback in a thread; yield its base URL."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture
def live(loom: Loom, local_model: None) -> Iterator[Live]:
    from loomdb.gateway import create_gateway_app

    for base in serve(create_gateway_app(loom)):
        yield Live(base + "/v1", loom)
