"""One live gateway per test module for the real clients: `loomdb gateway` itself (the
command, in a process of its own) over a fresh SQLite store, serving

- `local`, SmolLM2 in process, and `small`, the same model with a 256-token window
  (coding agents send ~20k tokens of system prompt and tools: the gateway fits them,
  and a short answer keeps each call to seconds);
- `upstream`, an `anthropic` alias pointing at the loopback stand-in for Anthropic's
  API (`anthropic_stub.py`): loomdb as a recording proxy;

with client model names mapped by pattern (`claude-*` -> `small`). The clients are
the installed ones: the `claude` binary the `claude-agent-sdk` wheel bundles, and the
npm devDependencies of `tests/clients/` (`make install` runs `npm ci` there)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from anthropic_stub import Stub, running

import loomdb
from conftest import free_port
from loomdb import Loom

ROOT = Path(__file__).resolve().parents[2]
NODE_BIN = ROOT / "tests" / "clients" / "node_modules" / ".bin"


def claude_binary() -> Path:
    """The `claude` binary inside the installed claude-agent-sdk wheel."""
    import claude_agent_sdk

    found = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    assert found.is_file(), f"claude-agent-sdk ships no claude binary at {found}"
    return found


def node_tool(name: str) -> Path:
    found = NODE_BIN / name
    assert found.exists(), f"{name} is not installed: run `make install` (npm ci in tests/clients)"
    return found


PROVIDERS = """
[models.small]
provider = "local"
context_window = 256

[models.upstream]
provider = "anthropic"
model = "claude-stub-1"
base_url = "{stub}"
api_key_env = "LOOMDB_TEST_ANTHROPIC_API_KEY"
max_retries = 0

[server]
models = ["local", "small", "upstream"]

[server.names]
"claude-*" = "small"
"""


@dataclass
class Gateway:
    """A running `loomdb gateway`: its base URL, store, folder and upstream stub."""

    base: str
    db: str
    home: Path
    stub: Stub

    def open(self) -> Loom:
        from loomdb.settings import Settings

        return loomdb.open(self.db, settings=Settings())

    def env(self, **extra: str) -> dict[str, str]:
        """A clean environment for a client process: HOME in the test's folder (its
        session files land there), nothing of the caller's but PATH."""
        return {"PATH": f"{NODE_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}",
                "HOME": str(self.home), "LANG": "C.UTF-8", **extra}

    def claude(self, *args: str, model: str = "small", timeout: float = 300,
               cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """The real Claude Code CLI against the gateway."""
        env = self.env(ANTHROPIC_BASE_URL=self.base, ANTHROPIC_API_KEY="unused",
                       ANTHROPIC_MODEL=model, ANTHROPIC_DEFAULT_HAIKU_MODEL=model,
                       ANTHROPIC_SMALL_FAST_MODEL=model,
                       CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1",
                       DISABLE_TELEMETRY="1")
        return subprocess.run([str(claude_binary()), *args], env=env, text=True,
                              capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL,
                              cwd=cwd or self.work)

    @property
    def work(self) -> Path:
        folder = self.home / "work"
        folder.mkdir(exist_ok=True)
        return folder


def start(tmp: Path) -> Iterator[Gateway]:
    """`loomdb gateway` in its own process, with the stub upstream; stopped after."""
    for stub in running():
        home = tmp / "home"
        home.mkdir()
        providers = tmp / "providers.toml"
        providers.write_text(PROVIDERS.format(stub=stub.url), encoding="utf-8")
        db = str(tmp / "store")
        port = free_port()
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "LOOMDB_PROVIDERS": str(providers),
               "LOOMDB_TEST_ANTHROPIC_API_KEY": "stub-key", "LOOMDB_MODEL_THREADS": "1"}
        proc = subprocess.Popen([sys.executable, "-m", "loomdb", "--db", db, "gateway",
                                 "--port", str(port)], env=env, stderr=subprocess.PIPE,
                                text=True)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    httpx.get(base + "/v1/models", timeout=2).raise_for_status()
                    break
                except httpx.TransportError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"the gateway did not start: {proc.stderr.read()}"
                                           ) from None
                    time.sleep(0.1)
            yield Gateway(base, db, home, stub)
        finally:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)


def texts(node: Any) -> str:
    return "".join(b.get("text", "") for b in node.content if b["type"] == "text")


def keep_fixture(src: Path, name: str) -> None:
    """Copy a file a real client wrote into tests/fixtures/agent-sessions/written/ when
    LOOMDB_KEEP_FIXTURES is set (how the fixtures there were made)."""
    if os.environ.get("LOOMDB_KEEP_FIXTURES"):
        target = ROOT / "tests" / "fixtures" / "agent-sessions" / "written" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)


__all__ = ["Gateway", "claude_binary", "keep_fixture", "node_tool", "pytest", "start", "texts"]
