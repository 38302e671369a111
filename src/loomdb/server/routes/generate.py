"""Generation over HTTP: N alternatives per model, optionally streamed as server-sent
events while the model writes.

A stream is `token` events (`{"job", "index", "delta"}`: which model, which
alternative, the new text) ending in one `done` event holding `{"nodes"}`, or an
`error` event holding `{"error": {"type", "message"}}`. The answers are stored exactly
as without streaming (one transaction, with provenance): the one call is
`Door.nodes.generate` (served models only, the in-process model one call at a time).
A client that closes the stream (the page's Stop) stops the model at its next token;
what it had written is stored, marked incomplete (`Door.nodes.generate(stop=...)`).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse, StreamingResponse

from ...errors import LoomError
from ...front import Door
from ...headish import Position
from ..errors import body as error_body
from ..errors import message_of
from ..schemas import ERRORS, GenerateIn, NodeIds
from ..state import door

router = APIRouter(prefix="/api/nodes", responses=ERRORS, tags=["nodes"])
_END = object()
#: what a stream is handed: (model job, alternative, new text)
Stream = Callable[[int, int, str], None]


@router.post("/{headish:path}/generate", status_code=201, response_model=NodeIds,
             responses={201: {"content": {"text/event-stream": {}}}})
def generate(headish: str, body: GenerateIn, me: Door = Depends(door)) -> Any:
    """Continuations at `headish` as sibling nodes; a session named there moves to the
    first. `"stream": true` answers with server-sent events (see the module docstring)."""
    pos = me.nodes.find(headish)  # an unknown name is a 404, before any stream starts
    if not body.stream:
        return JSONResponse({"nodes": run(me, pos, body, None)}, status_code=201)
    return StreamingResponse(events(me, pos, body), status_code=201,
                             media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def run(me: Door, pos: Position, body: GenerateIn, stream: Stream | None,
        stop: threading.Event | None = None) -> list[str]:
    result = me.nodes.generate(pos, models=body.models, n=body.n,
                               max_tokens=body.max_tokens, stream=stream, stop=stop)
    return [n.id for n in result.nodes]


def sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


async def events(me: Door, pos: Position, body: GenerateIn) -> AsyncIterator[str]:
    """Run the generation on a worker thread; relay its tokens as they come. Closed
    early (the client went away), the generator tells the worker to stop."""
    loop = asyncio.get_running_loop()
    out: asyncio.Queue[Any] = asyncio.Queue()
    stop = threading.Event()

    def put(item: Any) -> None:
        if stop.is_set() or loop.is_closed():
            return  # nobody reads the stream any more
        try:
            loop.call_soon_threadsafe(out.put_nowait, item)
        except RuntimeError:  # the loop closed meanwhile (the server stopped)
            stop.set()

    def token(job: int, index: int, delta: str) -> None:
        put(sse("token", {"job": job, "index": index, "delta": delta}))

    def work() -> None:
        try:
            put(sse("done", {"nodes": run(me, pos, body, token, stop)}))
        except LoomError as exc:
            put(sse("error", error_body(type(exc).__name__, message_of(exc))))
        except Exception as exc:  # noqa: BLE001 - the stream has begun: report, do not drop
            put(sse("error", error_body("InternalError", str(exc))))
        finally:
            put(_END)

    threading.Thread(target=work, name="loomdb-generate", daemon=True).start()
    try:
        while (item := await out.get()) is not _END:
            yield item
    finally:
        stop.set()
