"""The one error mapper: a typed error -> what each edge shows for it.

Every edge (the CLI now; the HTTP API and the MCP server as they come) turns an
exception into its own answer here and nowhere else, so one error means the same
thing everywhere:

    error                          CLI   HTTP  MCP (JSON-RPC code)
    UsageError, InvalidInput        2    400   -32602 invalid params
    TooLarge                        2    413   -32602
    CycleError, NotCompacted,       2    422   -32602
      request validation
    Unauthorized                    2    401   -32001
    NotFound, AmbiguousName         2    404   -32004
    RefConflict, RefsInTheWay,      2    409   -32009
      MergeConflict
    StoreBusy                       2    503   -32003
    StoreUnavailable                2    503   -32008
    ReadOnlyStore                   2    503   -32007
    ProviderError                   2    502   -32002
    MissingExtra                    2    501   -32005
    IntegrityError                  2    500   -32006
    any other LoomError             2    400   -32000
    anything else (a bug)           1    500   -32603 internal error

The gateway (`/v1`, OpenAI's error shape) answers the HTTP status, except that a
provider's own HTTP error status passes through (`Failure.upstream`). MCP answers a
failed tool as an error result whose text is `mcp_error`'s JSON, and a failed
resource read as a JSON-RPC error with that code.

The JSON shape is `{"error": {"type": <class name>, "message": <one line>}}`, the
same on stdout with `--json`, in an HTTP body and in an MCP error's data; a merge
conflict adds its regions (`"conflicts"`), so a client can show them without parsing
the message. The message
of an error that is not ours is not shown (it may hold internals): a bug says only
that it is one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import (
    CycleError,
    IntegrityError,
    InvalidInput,
    LoomError,
    MergeConflict,
    MissingExtra,
    NotCompacted,
    NotFound,
    ProviderError,
    ReadOnlyStore,
    RefConflict,
    StoreBusy,
    StoreUnavailable,
    TooLarge,
    Unauthorized,
)

# most specific first: the first class the error is an instance of decides
_TABLE: tuple[tuple[type[BaseException], int, int], ...] = (
    (TooLarge, 413, -32602),
    (CycleError, 422, -32602),
    (NotCompacted, 422, -32602),
    (InvalidInput, 400, -32602),
    (Unauthorized, 401, -32001),
    (NotFound, 404, -32004),
    (RefConflict, 409, -32009),
    (MergeConflict, 409, -32009),
    (StoreBusy, 503, -32003),
    (StoreUnavailable, 503, -32008),
    (ReadOnlyStore, 503, -32007),
    (ProviderError, 502, -32002),
    (MissingExtra, 501, -32005),
    (IntegrityError, 500, -32006),
    (LoomError, 400, -32000),
)
USAGE_EXIT = 2
BUG_EXIT = 1
INTERNAL_MESSAGE = "internal error (a bug in loomdb; please report it)"


@dataclass(frozen=True)
class Failure:
    """How every edge shows one error: its type, one line, and each edge's code."""

    type: str
    message: str
    exit_code: int
    status: int
    mcp_code: int
    #: what the error carries beyond its message (a merge conflict's regions)
    details: dict[str, Any] = field(default_factory=dict)
    #: the HTTP status a model provider answered with, when it gave one: the gateway
    #: (an OpenAI-compatible proxy) passes it on, so a client's retry logic sees the
    #: 429 it would have seen; every other edge answers `status`
    upstream: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The body every edge sends: `{"error": {"type", "message", ...details}}`."""
        return {"error": {"type": self.type, "message": self.message, **self.details}}

    def mcp_error(self) -> dict[str, Any]:
        """A JSON-RPC error object, the type and message repeated in `data`."""
        return {"code": self.mcp_code, "message": self.message, "data": self.to_json()["error"]}


def one_line(text: str) -> str:
    """A message as one line: an edge never prints a multi-line error. A message that
    quotes bad input may hold a lone surrogate, which no UTF-8 output can carry: it is
    shown escaped (`\udc80`), so the error itself never fails to print."""
    line = " ".join(text.split())
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = line.encode("utf-8", "backslashreplace").decode("utf-8")
    return line


def _is_validation(exc: BaseException) -> bool:
    """A request model's validation error (pydantic), known without importing pydantic."""
    kind = type(exc)
    return kind.__name__ == "ValidationError" and kind.__module__.startswith("pydantic")


def failure(exc: BaseException) -> Failure:
    """The one mapping: any exception -> its Failure (a bug when it is not ours)."""
    name = type(exc).__name__
    for kind, status, code in _TABLE:
        if isinstance(exc, kind):
            return Failure(name, one_line(str(exc)) or name, USAGE_EXIT, status, code,
                           _details(exc), _upstream(exc))
    if _is_validation(exc):
        return Failure("InvalidInput", one_line(str(exc)), USAGE_EXIT, 422, -32602)
    return Failure("InternalError", INTERNAL_MESSAGE, BUG_EXIT, 500, -32603)


def _details(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, MergeConflict):
        return {"conflicts": exc.conflicts}
    return {}


def _upstream(exc: BaseException) -> int | None:
    status = getattr(exc, "status", None) if isinstance(exc, ProviderError) else None
    return status if isinstance(status, int) and 400 <= status <= 599 else None


def exit_code(exc: BaseException) -> int:
    """The CLI's exit code: 2 for every typed error."""
    return failure(exc).exit_code


def http_status(exc: BaseException) -> int:
    """The HTTP status for an error."""
    return failure(exc).status


def error_json(exc: BaseException) -> dict[str, Any]:
    """`{"error": {"type", "message"}}` for an error."""
    return failure(exc).to_json()


def mcp_error(exc: BaseException) -> dict[str, Any]:
    """The JSON-RPC error object an MCP server answers with."""
    return failure(exc).mcp_error()


__all__ = [
    "BUG_EXIT", "Failure", "USAGE_EXIT", "error_json", "exit_code", "failure",
    "http_status", "mcp_error", "one_line",
]
