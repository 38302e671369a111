"""Errors at the HTTP edge: one table from loomdb's typed errors to a status code.

Every error leaves as `{"error": {"type", "message"}}`. A user mistake is never a 500:
bad input 400, no or bad token 401, unknown (or not yours) 404, a moved ref 409, a
request that does not match the schema 422; a store busy past its timeout is 503 (try
again), a failed model provider 502. The table is the one place to change.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..errors import (
    IntegrityError,
    InvalidInput,
    LoomError,
    MissingExtra,
    NotFound,
    ProviderError,
    RefConflict,
    StoreBusy,
)


class Unauthorized(LoomError):
    """No token, or a token no user holds, while the store has users."""


#: most specific first: the first class an error is an instance of gives its status
STATUS: list[tuple[type[LoomError], int]] = [
    (Unauthorized, 401),
    (NotFound, 404),
    (InvalidInput, 400),
    (RefConflict, 409),
    (StoreBusy, 503),
    (MissingExtra, 501),
    (ProviderError, 502),
    (IntegrityError, 500),
    (LoomError, 400),
]


def status_of(exc: LoomError) -> int:
    return next(code for cls, code in STATUS if isinstance(exc, cls))


def message_of(exc: LoomError) -> str:
    """The error's one-line message; an unknown name's candidates are left out (over
    HTTP they could name other users' refs)."""
    if isinstance(exc, NotFound):
        return f"unknown {exc.what}: {exc.name!r}" if type(exc) is NotFound else str(exc)
    return " ".join(str(exc).split())


def body(kind: str, message: str) -> dict[str, Any]:
    return {"error": {"type": kind, "message": message}}


def to_response(exc: LoomError) -> JSONResponse:
    status = status_of(exc)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else (
        {"Retry-After": "1"} if status == 503 else None)
    return JSONResponse(body(type(exc).__name__, message_of(exc)), status, headers=headers)


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
