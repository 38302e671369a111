"""MCP servers as tool sources: start each over stdio with the official `mcp` SDK,
list its tools, call one. A server is started per use and stopped after it, so a
paused turn resumed in another process needs nothing kept alive."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import MissingExtra
from .tools import TOOL_TIMEOUT, Result


def _params(spec: Mapping[str, Any]) -> Any:
    try:
        from mcp import StdioServerParameters
    except ImportError:
        raise MissingExtra("MCP servers", "mcp") from None
    return StdioServerParameters(command=spec["command"], args=list(spec.get("args") or []),
                                 env=dict(spec.get("env") or {}) or None, cwd=spec.get("cwd"))


def _run(job: Any) -> Any:
    """Run a client job to completion, within the tool time limit."""
    import anyio

    async def timed() -> Any:
        with anyio.fail_after(TOOL_TIMEOUT):
            return await job()

    return anyio.run(timed)


def list_tools(servers: Mapping[str, Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Every server's tools as `{"name", "description", "input_schema"}`."""
    from mcp import ClientSession, stdio_client

    async def job() -> dict[str, list[dict[str, Any]]]:
        found: dict[str, list[dict[str, Any]]] = {}
        for name, spec in servers.items():
            async with stdio_client(_params(spec)) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                listed = await session.list_tools()
                found[name] = [{"name": t.name, "description": t.description or "",
                                "input_schema": dict(t.input_schema)} for t in listed.tools]
        return found

    return _run(job)  # type: ignore[no-any-return]


def call_tool(spec: Mapping[str, Any], name: str, args: dict[str, Any]) -> Result:
    """One call on a server; its text content is the result."""
    from mcp import ClientSession, stdio_client

    async def job() -> Result:
        async with stdio_client(_params(spec)) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            done = await session.call_tool(name, args)
            text = "".join(getattr(c, "text", "") for c in done.content)
            return Result(text, bool(done.is_error))

    return _run(job)  # type: ignore[no-any-return]
