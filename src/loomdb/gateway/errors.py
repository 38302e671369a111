"""Each wire's error shape, from the one error mapper (`loomdb.edge`): the status and
the message are the mapper's on every wire, so a TooLarge is a 413 and a busy store a
503 whichever client asked; a provider's own HTTP status passes through (a 429 stays a
429 for the client's retry logic), 502 when it gave none.

- OpenAI: `{"error": {"message", "type", "param", "code"}}`, `code` the mapper's error
  type (`model_not_found` for an unknown model, as OpenAI names it);
- Anthropic: `{"type": "error", "error": {"type", "message"}}` with Anthropic's type for
  the status (invalid_request_error 400, authentication_error 401, permission_error
  403, not_found_error 404, request_too_large 413, rate_limit_error 429, api_error
  500, overloaded_error 529...).
"""

from __future__ import annotations

from typing import Any

from ..edge import failure
from ..errors import LoomError, NotFound, ProviderError

_OPENAI = {400: "invalid_request_error", 401: "authentication_error",
           403: "permission_error", 404: "not_found_error", 409: "conflict_error",
           413: "invalid_request_error", 422: "invalid_request_error",
           429: "rate_limit_error"}
ANTHROPIC = {400: "invalid_request_error", 401: "authentication_error",
             403: "permission_error", 404: "not_found_error", 409: "invalid_request_error",
             413: "request_too_large", 422: "invalid_request_error",
             429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}


def openai_error(exc: BaseException) -> tuple[int, dict[str, Any]]:
    """Any error -> (HTTP status, OpenAI error body); a bug's message stays hidden."""
    found = failure(exc)
    status = found.upstream or found.status
    param = getattr(exc, "where", None) if isinstance(exc, LoomError) else None
    code: str | None = found.type
    if isinstance(exc, NotFound):
        param = exc.what if exc.what == "model" else None
        code = "model_not_found" if param == "model" else code
    if status in _OPENAI:
        kind = _OPENAI[status]
    else:
        kind = "upstream_error" if isinstance(exc, ProviderError) else "api_error"
    return status, {"error": {"message": found.message, "type": kind, "param": param,
                              "code": code}}


def anthropic_error(exc: BaseException) -> tuple[int, dict[str, Any]]:
    """Any error -> (HTTP status, Anthropic error body)."""
    found = failure(exc)
    status = found.upstream or found.status
    kind = ANTHROPIC.get(status, "overloaded_error" if status == 503 else "api_error")
    return status, {"type": "error", "error": {"type": kind, "message": found.message}}


def responses_event(exc: BaseException) -> dict[str, Any]:
    """A failure during a streamed response, as the Responses API's `error` event."""
    _, body = openai_error(exc)
    return {"type": "error", **body["error"]}


def anthropic_event(exc: BaseException) -> dict[str, Any]:
    """A failure during an Anthropic stream: the `error` event."""
    return anthropic_error(exc)[1]
