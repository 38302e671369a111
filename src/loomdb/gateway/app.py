"""The gateway's HTTP face: a FastAPI router and a standalone app, one route per wire.

    POST /v1/chat/completions   OpenAI Chat (stream or not)
    POST /v1/responses          OpenAI Responses (stream or not; previous_response_id)
    POST /v1/messages           Anthropic Messages (stream or not; `?beta=true`)
    POST /v1/messages/count_tokens
    POST /v1/completions        buffer trees: the prompt is the document
    GET  /v1/models             OpenAI's list, Anthropic's when `anthropic-version` is sent

Bodies are read as bytes and parsed once with the stdlib (no request model: a
2,000-message history must not be validated field by field twice). The work runs in
a worker thread; the event loop only moves bytes. Errors leave in the wire's own shape
(`errors.py`) with the status of the one error mapper (`loomdb.edge`), and nothing is
written for any of them.

`X-Loomdb-Session: NAME` moves (or creates) that session to the first answer and
restricts path matching to its tree.
"""

from __future__ import annotations

import asyncio
import json
import logging
import queue
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from ..errors import LoomError
from ..guard import Guard, Trust
from . import errors
from .body import ANTHROPIC, CHAT, COMPLETIONS, COUNT_TOKENS, RESPONSES, Kind, parse, read

if TYPE_CHECKING:
    from ..api import Loom
    from ..front import Runtime
    from ..front.gateway import ClientFactory, Gateway

log = logging.getLogger(__name__)
SESSION_HEADER = "x-loomdb-session"
error_body = errors.openai_error  # the name the tests and the server's callers know


@dataclass(frozen=True)
class _Wire:
    """What the HTTP edge needs of a wire: its body fields, error shapes, SSE framing."""

    name: str
    fields: Mapping[str, Kind]
    error: Callable[[BaseException], tuple[int, dict[str, Any]]]
    event: Callable[[BaseException], dict[str, Any]]
    named_events: bool  # `event: <type>` lines (Responses, Anthropic) or data only
    done: bytes = b""


_CHAT = _Wire("openai-chat", CHAT, errors.openai_error, lambda e: errors.openai_error(e)[1],
              False, b"data: [DONE]\n\n")
_RESPONSES = _Wire("openai-responses", RESPONSES, errors.openai_error,
                   errors.responses_event, True)
_MESSAGES = _Wire("anthropic-messages", ANTHROPIC, errors.anthropic_error,
                  errors.anthropic_event, True)


def _json(value: Any, status: int = 200) -> Response:
    try:
        data = json.dumps(value, ensure_ascii=False).encode()
    except UnicodeEncodeError:  # a lone surrogate quoted from a bad request: escaped
        data = json.dumps(value).encode()
    return Response(data, status_code=status, media_type="application/json")


def _failed(exc: BaseException, wire: _Wire = _CHAT) -> Response:
    if not isinstance(exc, LoomError):  # a bug: the client sees only that it is one
        log.error("gateway request failed", exc_info=exc)
    status, body = wire.error(exc)
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
    router = APIRouter(tags=["model gateway"])

    async def exchange(request: Request, wire: _Wire, **extra: Any) -> Response:
        try:
            body, source = read(await request.body(), wire.fields, loom.limits.json_depth)
            if wire is _MESSAGES:  # a recording proxy sends the client's own text on
                extra["source"] = source
            session = request.headers.get(SESSION_HEADER)
            if body.get("stream"):  # parsed in the thread that streams: one trip there
                return await _stream(gw, wire, lambda: gw.parse(wire.name, body, **extra),
                                     session)

            def work() -> bytes:  # one trip to a worker thread: the call, then encoding
                ex = gw.parse(wire.name, body, **extra)
                return json.dumps(gw.answer(wire.name, ex, session),
                                  ensure_ascii=False).encode()

            return Response(await run_in_threadpool(work), media_type="application/json")
        except Exception as exc:  # noqa: BLE001 - every error answers through the mapper
            return _failed(exc, wire)

    @router.get("/v1/models")
    def list_models(request: Request) -> Response:
        anthropic = "anthropic-version" in request.headers
        try:
            return _json(gw.models("anthropic-messages" if anthropic else "openai-chat"))
        except Exception as exc:  # noqa: BLE001 - every error answers through the mapper
            return _failed(exc, _MESSAGES if anthropic else _CHAT)

    @router.post("/v1/chat/completions")
    async def chat_completions(request: Request) -> Response:
        return await exchange(request, _CHAT)

    @router.post("/v1/responses")
    async def responses(request: Request) -> Response:
        return await exchange(request, _RESPONSES)

    @router.post("/v1/messages")
    async def messages(request: Request) -> Response:
        return await exchange(request, _MESSAGES, beta=request.headers.get("anthropic-beta"))

    @router.post("/v1/messages/count_tokens")
    async def count_tokens(request: Request) -> Response:
        try:
            body = await _body(request, COUNT_TOKENS, loom)
            return _json(await run_in_threadpool(gw.count_tokens, body))
        except Exception as exc:  # noqa: BLE001 - every error answers through the mapper
            return _failed(exc, _MESSAGES)

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
#: idle stream threads kept beyond this many end
_IDLE_KEPT = 16


class _Workers:
    """The threads streams run in: daemon threads kept between streams, so a stream
    starts on an idle one (starting a thread costs a busy machine milliseconds, all on
    the first byte's path); a new one is started only when none is idle, since a
    stream holds its thread for as long as the model writes."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._idle = 0
        self._lock = threading.Lock()

    def run(self, job: Callable[[], None]) -> None:
        with self._lock:
            start = self._idle == 0
            if not start:
                self._idle -= 1  # that thread is now this job's
        self._jobs.put(job)
        if start:
            threading.Thread(target=self._serve, name="loomdb-gateway-stream",
                             daemon=True).start()

    def _serve(self) -> None:
        while True:
            self._jobs.get()()  # a job catches what it raises (see `_stream`)
            with self._lock:
                if self._idle >= _IDLE_KEPT:
                    return
                self._idle += 1


_WORKERS = _Workers()


async def _stream(gw: Gateway, wire: _Wire, parse: Callable[[], Any],
                  session: str | None) -> Response:
    """Server-sent events as the model writes; the closing ones after the commit.

    The request is parsed (`parse`) and the model runs in one thread (`gw.stream`,
    which makes every chunk in the wire's shape), handing them to the loop through a
    queue. The first event is awaited before the response starts, so a bad request or
    a model that fails at once still gets its own HTTP status; a failure later arrives
    as the wire's error event, and in every case of failure nothing is recorded."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()

    def put(item: Any) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, item)

    def work() -> None:
        try:
            gw.stream(wire.name, parse(), session, put)
        except LoomError as exc:
            put(exc)
        except Exception as exc:  # noqa: BLE001 - a bug: logged here, the client told
            log.error("gateway stream failed", exc_info=exc)
            put(exc)
        finally:
            put(_DONE)

    _WORKERS.run(work)
    first = await queue.get()
    if isinstance(first, Exception):
        status, error = wire.error(first)  # logged by the worker
        return _json(error, status)

    async def events() -> AsyncIterator[bytes]:
        item = first
        while item is not _DONE:
            if isinstance(item, Exception):
                yield _sse(wire.event(item), wire.named_events)
                item = await queue.get()
                continue
            yield _sse(item, wire.named_events)
            item = await queue.get()
        if wire.done:
            yield wire.done

    return StreamingResponse(events(), media_type="text/event-stream",
                             headers={"cache-control": "no-cache"})


def _sse(value: Any, named: bool) -> bytes:
    data = b"data: " + json.dumps(value, ensure_ascii=False).encode() + b"\n\n"
    kind = value.get("type") if named and isinstance(value, dict) else None
    if isinstance(kind, str):
        return b"event: " + kind.encode() + b"\n" + data
    return data
