"""The OpenAI-compatible HTTP face of the gateway: a FastAPI router and a standalone app.

    POST /v1/chat/completions   (stream or not)   GET /v1/models
    POST /v1/responses          (previous_response_id continues from that node)
    POST /v1/completions        (buffer trees: the prompt is the document)

Bodies are read as bytes and parsed once with the stdlib (no request model: a
2,000-message history must not be validated field by field twice). The work runs in
a worker thread; the event loop only moves bytes. Errors leave in OpenAI's shape,
`{"error": {"message", "type", "param", "code"}}`, with the status of the one error
mapper (`loomdb.edge`: 400 for bad input, 404 for an unknown model or node, 503 for a
busy store...) and an upstream model's failure with the status it gave (502 when it
gave none). Nothing is written for any of them.

`X-Loomdb-Session: NAME` moves (or creates) that session to the first answer and
restricts path matching to its tree.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from ..edge import failure
from ..errors import LoomError, NotFound, ProviderError
from ..guard import Guard, Trust
from .body import CHAT, COMPLETIONS, RESPONSES, Kind, parse

if TYPE_CHECKING:
    from ..api import Loom
    from ..front import Runtime
    from ..front.gateway import ClientFactory, Gateway

log = logging.getLogger(__name__)
SESSION_HEADER = "x-loomdb-session"
_TYPES = {400: "invalid_request_error", 401: "authentication_error",
          403: "permission_error", 404: "not_found_error", 409: "conflict_error",
          413: "invalid_request_error", 422: "invalid_request_error",
          429: "rate_limit_error"}


def error_body(exc: BaseException) -> tuple[int, dict[str, Any]]:
    """Any error -> (HTTP status, OpenAI error body). The status and the message come
    from the one error mapper (`loomdb.edge`), so a busy store is a 503 here as on the
    API; `code` is the mapper's error type (`model_not_found` for an unknown model, as
    OpenAI names it), and a bug's message stays hidden."""
    found = failure(exc)
    status = found.upstream or found.status
    param = getattr(exc, "where", None) if isinstance(exc, LoomError) else None
    code: str | None = found.type
    if isinstance(exc, NotFound):
        param = exc.what if exc.what == "model" else None
        code = "model_not_found" if param == "model" else code
    if status in _TYPES:
        kind = _TYPES[status]
    else:
        kind = "upstream_error" if isinstance(exc, ProviderError) else "api_error"
    return status, {"error": {"message": found.message, "type": kind, "param": param,
                              "code": code}}


def _json(value: Any, status: int = 200) -> Response:
    try:
        data = json.dumps(value, ensure_ascii=False).encode()
    except UnicodeEncodeError:  # a lone surrogate quoted from a bad request: escaped
        data = json.dumps(value).encode()
    return Response(data, status_code=status, media_type="application/json")


def _failed(exc: BaseException) -> Response:
    if not isinstance(exc, LoomError):  # a bug: the client sees only that it is one
        log.error("gateway request failed", exc_info=exc)
    status, body = error_body(exc)
    return _json(body, status)


async def _body(request: Request, fields: Mapping[str, Kind], loom: Loom) -> dict[str, Any]:
    """The request's JSON object, held to its endpoint's fields (body.py)."""
    return parse(await request.body(), fields, loom.limits.json_depth)


def gateway_router(loom: Loom, *, runtime: Runtime | None = None,
                   clients: ClientFactory | None = None) -> APIRouter:
    """The `/v1` routes over one Loom (mount into any FastAPI app), under `runtime`
    (default: the Loom's): its models, environment, and the limits of what a request
    may ask for (default: the Loom's). Each handler is one call on the front door's
    gateway (`loomdb.front.gateway`) in a worker thread, plus serialization."""
    rt = runtime or loom.runtime
    gw = loom.as_(loom.operator, runtime=rt).gateway(clients)
    router = APIRouter(tags=["openai-compatible gateway"])

    @router.get("/v1/models")
    def list_models() -> Response:
        try:
            return _json({"object": "list", "data": gw.models()})
        except Exception as exc:  # noqa: BLE001 - every error answers through the mapper
            return _failed(exc)

    @router.post("/v1/chat/completions")
    async def chat_completions(request: Request) -> Response:
        try:
            body = await _body(request, CHAT, loom)
            session = request.headers.get(SESSION_HEADER)
            if body.get("stream"):
                return await _stream(gw, await run_in_threadpool(gw.start_stream, body),
                                     session, body)

            def work() -> bytes:  # one trip to a worker thread: the call, then encoding
                return json.dumps(gw.chat(body, session), ensure_ascii=False).encode()

            return Response(await run_in_threadpool(work), media_type="application/json")
        except Exception as exc:  # noqa: BLE001 - every error answers through the mapper
            return _failed(exc)

    @router.post("/v1/responses")
    async def responses(request: Request) -> Response:
        try:
            body = await _body(request, RESPONSES, loom)
            session = request.headers.get(SESSION_HEADER)
            return _json(await run_in_threadpool(gw.respond, body, session))
        except Exception as exc:  # noqa: BLE001 - every error answers through the mapper
            return _failed(exc)

    @router.post("/v1/completions")
    async def completions(request: Request) -> Response:
        try:
            body = await _body(request, COMPLETIONS, loom)
            session = request.headers.get(SESSION_HEADER)
            return _json(await run_in_threadpool(gw.complete, body, session))
        except Exception as exc:  # noqa: BLE001 - every error answers through the mapper
            return _failed(exc)

    return router


def create_gateway_app(
    loom: Loom,
    *,
    runtime: Runtime | None = None,
    clients: ClientFactory | None = None,
    trust: Trust | None = None,
) -> FastAPI:
    """A FastAPI app serving only the gateway (the main server mounts the same router),
    behind the same `loomdb.guard` as the main server: its hosts, origins, content
    types and body limits (`trust`; default: loopback names and the Loom's limits).
    `runtime`: the models it serves and where their keys are read (default: the Loom's)."""
    app = FastAPI(title="loomdb gateway", version="0.1.0", docs_url=None, redoc_url=None,
                  openapi_url=None)
    trust = trust or Trust(limits=loom.limits)
    rt = replace(runtime or loom.runtime, limits=trust.limits)
    app.include_router(gateway_router(loom, runtime=rt, clients=clients))
    app.add_middleware(Guard, trust=trust)
    return app


# == streaming ======================================================================
_DONE = object()


async def _stream(gw: Gateway, ex: Any, session: str | None, body: Mapping[str, Any]) -> Response:
    """Server-sent chunks as the model writes; the closing chunk after the commit.

    The model runs in a thread (`gw.stream`, which makes every chunk) and hands them
    to the loop through a queue. The first event is awaited before the response
    starts, so a model that fails at once still gets its own HTTP status; a failure
    later arrives as an error event, and in every case of failure nothing is recorded."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()
    usage_wanted = bool((body.get("stream_options") or {}).get("include_usage"))

    def put(item: Any) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, item)

    def work() -> None:
        try:
            gw.stream(ex, session, put, usage_wanted)
        except LoomError as exc:
            put(exc)
        except Exception as exc:  # noqa: BLE001 - a bug: logged here, the client told
            log.error("gateway stream failed", exc_info=exc)
            put(exc)
        finally:
            put(_DONE)

    threading.Thread(target=work, name="loomdb-gateway-stream", daemon=True).start()
    first = await queue.get()
    if isinstance(first, Exception):
        status, error = error_body(first)  # logged by the worker
        return _json(error, status)

    async def events() -> AsyncIterator[bytes]:
        item = first
        while item is not _DONE:
            if isinstance(item, Exception):
                yield _sse(error_body(item)[1])
            else:
                yield _sse(item)
            item = await queue.get()
        yield b"data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


def _sse(value: Any) -> bytes:
    return b"data: " + json.dumps(value, ensure_ascii=False).encode() + b"\n\n"
