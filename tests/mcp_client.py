"""Drive loomdb's MCP server with the official SDK's stdio client: one server process
over a store URL, a job run against its session."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

import loomdb

SRC = str(Path(loomdb.__file__).parent.parent)


def server(store_url: str) -> dict[str, Any]:
    """How to start `loomdb mcp` over a store (the code under test first on the path)."""
    return {"command": sys.executable, "args": ["-m", "loomdb", "--db", store_url, "mcp"],
            "env": {"PYTHONPATH": SRC, "PATH": os.environ.get("PATH", "")}}


def answer(done: Any, error: bool = False) -> Any:
    """A tool result's object: its structured content, which its text repeats."""
    assert done.is_error == error, done.content
    assert done.structured_content == json.loads(done.content[0].text)
    return done.structured_content


def session_with(store_url: str, job: Any) -> Any:
    """Run `job(session)` against a fresh server process; its answer."""
    spec = server(store_url)
    params = StdioServerParameters(command=spec["command"], args=spec["args"], env=spec["env"])

    async def main() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return await job(s)

    return anyio.run(main)
