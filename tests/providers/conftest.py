"""Fixtures for the provider layer: SDK request validators, a tiny PNG behind a dict-backed
blob reader, the local model loaded once, and a real llama.cpp HTTP server on loopback."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import time
import urllib.request
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from loomdb.content import digest
from loomdb.providers.config import ModelSpec, resolve_model

Validator = Callable[[dict[str, Any]], None]


def materialize(value: Any) -> Any:
    """Validated SDK params with every lazy iterable consumed (which runs its validation)."""
    if isinstance(value, dict):
        return {k: materialize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) or type(value).__name__ == "ValidatorIterator":
        return [materialize(v) for v in value]
    return value


def strict_validator(params_type: Any) -> Validator:
    """Validate a body against an SDK TypedDict; fail on unknown keys too.

    Pydantic drops keys a TypedDict does not declare, so the body must come back
    unchanged once every nested iterable is consumed.
    """
    adapter = TypeAdapter(params_type)

    def validate(body: dict[str, Any]) -> None:
        assert materialize(adapter.validate_python(body)) == body

    return validate


@pytest.fixture(scope="session")
def valid_openai_chat() -> Validator:
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

    return strict_validator(CompletionCreateParamsNonStreaming)


@pytest.fixture(scope="session")
def valid_openai_completion() -> Validator:
    from openai.types.completion_create_params import CompletionCreateParamsNonStreaming

    return strict_validator(CompletionCreateParamsNonStreaming)


@pytest.fixture(scope="session")
def valid_anthropic() -> Validator:
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    return strict_validator(MessageCreateParamsNonStreaming)


def tiny_png() -> bytes:
    """A real 1x1 red PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


class Blobs(dict[str, bytes]):
    """A dict-backed blob store: `put` returns the ref, calling it reads."""

    def put(self, data: bytes) -> str:
        ref = digest(data)
        self[ref] = data
        return ref

    def __call__(self, ref: str) -> bytes:
        return self[ref]


@pytest.fixture
def blobs() -> Blobs:
    return Blobs()


@pytest.fixture
def png() -> bytes:
    return tiny_png()


@pytest.fixture(scope="session")
def local_spec() -> ModelSpec:
    return resolve_model("local")


@pytest.fixture(scope="session")
def local_client(local_spec: ModelSpec) -> Any:
    """The in-process SmolLM2, loaded once for the session."""
    from loomdb.providers.local import LocalClient, load_model

    # a test is an edge: the thread count the suite set for the model (tests/conftest.py)
    threads = os.environ.get("LOOMDB_MODEL_THREADS")
    client = LocalClient(local_spec, threads)
    load_model(client.path, n_threads=threads)
    return client


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def unused_port() -> int:
    """A loopback port nothing listens on (connections to it are refused)."""
    return free_port()


def _wait_until_up(url: str, proc: subprocess.Popen[bytes], log: Path, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"llama.cpp server exited: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url + "/v1/models", timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"llama.cpp server did not answer in {limit}s: {log.read_text()[-2000:]}")


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real OpenAI-compatible HTTP server (llama_cpp.server) on loopback; yields its /v1 URL."""
    from loomdb.providers.local import smollm2_path

    port = free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    cmd = [
        sys.executable,
        str(Path(__file__).with_name("llama_server.py")),
        "--model",
        str(smollm2_path()),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
        "--model_alias",
        "smollm2",
        # concurrent alternatives must queue, not cut each other's streams short
        "--interrupt_requests",
        "False",
    ]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env={**os.environ})
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(base, proc, log)
        yield base + "/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
