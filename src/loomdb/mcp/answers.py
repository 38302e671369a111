"""How the MCP server answers: a JSON object, and every error through the one mapper.

A tool's answer is one JSON object, sent twice in its result: as `structuredContent`
(what the tool's `outputSchema` declares) and as JSON text, for clients that read only
text. A tool that fails answers an error result (`isError`) carrying the mapper's
JSON-RPC error object the same two ways, `{"code", "message", "data": {"type",
"message"}}` (`loomdb.edge.mcp_error`), so an agent reads the same code and type the
HTTP API and the CLI give for that error (a call whose arguments do not match the
tool's schema is refused by the SDK before it reaches loomdb, in the SDK's words). A
resource read that fails is a JSON-RPC error with that code. A bug says only that it
is one (its traceback goes to the server's log, stderr).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

from ..errors import LoomError


def dumps(value: Any) -> str:
    """A tool's or resource's answer as JSON text."""
    return json.dumps(value, ensure_ascii=False)


def _noted(exc: Exception) -> None:
    if not isinstance(exc, LoomError):  # a bug: its traceback to the server's log
        import logging

        logging.getLogger(__name__).error("MCP call failed", exc_info=exc)


def result(value: dict[str, Any], *, error: bool = False) -> Any:
    """A tool's result: the object as structured content and as its JSON text."""
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=dumps(value))],
                          structured_content=value, is_error=error)


def tool_error(exc: Exception) -> Any:
    """A failed tool's answer: an error result carrying the mapper's error object
    (returned, not raised, so the SDK adds no prefix to the JSON)."""
    from ..edge import failure

    _noted(exc)
    return result(failure(exc).mcp_error(), error=True)


def resource_error(exc: Exception) -> Exception:
    """A JSON-RPC error with the mapper's code, message and data."""
    from mcp.shared.exceptions import MCPError

    from ..edge import failure

    _noted(exc)
    found = failure(exc).mcp_error()
    return MCPError(code=found["code"], message=found["message"], data=found["data"])


def tool(fn: Callable[..., dict[str, Any]]) -> Callable[..., Any]:
    """A tool function answering its object (see `result`); any error answers the
    mapper's error result."""
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return result(fn(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - every error answers through the mapper
            return tool_error(exc)

    return call


def resource(fn: Callable[..., Any]) -> Callable[..., str]:
    """A resource function answering JSON; any error becomes the mapper's JSON-RPC error."""
    @functools.wraps(fn)
    def read(*args: Any, **kwargs: Any) -> str:
        try:
            return dumps(fn(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - every error answers through the mapper
            raise resource_error(exc) from None

    return read


__all__ = ["dumps", "resource", "resource_error", "result", "tool", "tool_error"]
