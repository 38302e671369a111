"""Errors at the HTTP edge: one table from loomdb's typed errors to a status code.

Every error leaves as `{"error": {"type", "message"}}`. A user mistake is never a 500:
bad input 400, no or bad token 401, unknown (or not yours) 404, a moved ref or a merge
conflict 409 (with its `conflicts`), a request that does not match the schema 422; a
store busy past its timeout is 503 (try again), a failed model provider 502. The statuses come from `loomdb.edge`, the one
mapper every edge shares.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import edge
from ..errors import LoomError, NotFound, Unauthorized

__all__ = ["Unauthorized", "body", "install", "message_of", "status_of", "to_response"]


def status_of(exc: LoomError) -> int:
    """The status `loomdb.edge` gives every edge for this error."""
    return edge.http_status(exc)


def message_of(exc: LoomError) -> str:
    """The error's one-line message; an unknown name's candidates are left out (over
    HTTP they could name other users' refs)."""
    if isinstance(exc, NotFound):
        return f"unknown {exc.what}: {exc.name!r}" if type(exc) is NotFound else str(exc)
    return " ".join(str(exc).split())


def body(kind: str, message: str) -> dict[str, Any]:
    return {"error": {"type": kind, "message": message}}


def to_response(exc: LoomError) -> JSONResponse:
    shown = edge.failure(exc)
    headers = {"WWW-Authenticate": "Bearer"} if shown.status == 401 else (
        {"Retry-After": "1"} if shown.status == 503 else None)
    out = body(type(exc).__name__, message_of(exc))
    out["error"].update(shown.details)
    return JSONResponse(out, shown.status, headers=headers)


def install(app: FastAPI) -> None:
    """Register the handlers that give every error the one shape."""

    async def loom_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, LoomError)
        return to_response(exc)

    async def invalid(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return JSONResponse(body("ValidationError", f"{where}: {first.get('msg', 'invalid')}"), 422)

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        kind = {404: "NotFound", 405: "MethodNotAllowed"}.get(exc.status_code, "HTTPError")
        return JSONResponse(body(kind, str(exc.detail)), exc.status_code, headers=exc.headers)

    app.add_exception_handler(LoomError, loom_error)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(StarletteHTTPException, http_error)
