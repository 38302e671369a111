"""MCP servers as tool sources: start each configured server over stdio with the
official `mcp` SDK, list its tools, call one. A server is started per use and stopped
after it, so a paused turn resumed in another process needs nothing kept alive. A
server gets the minimal environment and the time limit every program gets
(`programs.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import LoomError, MissingExtra, ProviderError
from .config import ServerSpec
from .programs import environment, seconds
from .results import Result


def _sdk() -> Any:
    try:
        import mcp
    except ImportError:
        raise MissingExtra("MCP servers", "mcp") from None
    return mcp


def _params(spec: ServerSpec, environ: Mapping[str, str] | None) -> Any:
    from mcp import StdioServerParameters

    cwd = spec.program.cwd
    return StdioServerParameters(command=spec.command, args=list(spec.args),
                                 env=environment(spec.program, environ),
                                 cwd=str(cwd) if cwd is not None else None)


def _run(job: Any, timeout: float) -> Any:
    """Run a client job to completion, within the time limit."""
    import anyio

    async def timed() -> Any:
        with anyio.fail_after(timeout):
            return await job()

    return anyio.run(timed)


def list_tools(servers: Mapping[str, ServerSpec], timeout: float,
               environ: Mapping[str, str] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Every server's tools as `{"name", "description", "input_schema"}`; a server
    that does not start or answer is a ProviderError naming it."""
    _sdk()
    from mcp import ClientSession, stdio_client

    found: dict[str, list[dict[str, Any]]] = {}
    for name, spec in servers.items():
        async def job(spec: ServerSpec = spec) -> list[dict[str, Any]]:
            async with stdio_client(_params(spec, environ)) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                listed = await session.list_tools()
                return [{"name": t.name, "description": t.description or "",
                         "input_schema": dict(t.input_schema)} for t in listed.tools]

        limit = seconds(spec.program, timeout)
        try:
            found[name] = _run(job, limit)
        except LoomError:
            raise
        except TimeoutError:
            raise ProviderError(f"MCP server {name}", f"did not list its tools within {limit:g} s "
                                "(it was stopped)") from None
        except Exception as exc:  # it would not start, or broke the protocol
            raise ProviderError(f"MCP server {name}",
                                f"could not list its tools: {_why(exc)}") from None
    return found


def _why(exc: BaseException) -> str:
    """One line for what went wrong (the first error of an exception group)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return " ".join(f"{type(exc).__name__}: {exc}".split())


def call_tool(spec: ServerSpec, name: str, args: dict[str, Any], timeout: float,
              environ: Mapping[str, str] | None = None) -> Result:
    """One call on a server; its text content is the result (an error result when
    it takes longer than its time limit: the server is stopped)."""
    _sdk()
    from mcp import ClientSession, stdio_client

    async def job() -> Result:
        async with stdio_client(_params(spec, environ)) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            done = await session.call_tool(name, args)
            text = "".join(getattr(c, "text", "") for c in done.content)
            return Result(text, bool(done.is_error))

    limit = seconds(spec.program, timeout)
    try:
        return _run(job, limit)  # type: ignore[no-any-return]
    except TimeoutError:
        return Result(f"MCP server {spec.name} did not answer within {limit:g} s "
                      "(it was stopped)", True)
