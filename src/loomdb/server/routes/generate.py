"""Generation over HTTP: N alternatives per model, optionally streamed as server-sent
events while the model writes.

A stream is `token` events (`{"job", "index", "delta"}`: which model, which
alternative, the new text) ending in one `done` event holding `{"nodes"}`, or an
`error` event holding `{"error": {"type", "message"}}`. The answers are stored exactly
as without streaming (one transaction, with provenance): the one call is
`Door.nodes.generate` (served models only, the in-process model one call at a time).
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterator
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


def run(me: Door, pos: Position, body: GenerateIn, stream: Stream | None) -> list[str]:
    result = me.nodes.generate(pos, models=body.models, n=body.n,
                               max_tokens=body.max_tokens, stream=stream)
    return [n.id for n in result.nodes]


def sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def events(me: Door, pos: Position, body: GenerateIn) -> Iterator[str]:
    """Run the generation on a worker thread; relay its tokens as they come."""
    out: queue.Queue[Any] = queue.Queue()

    def token(job: int, index: int, delta: str) -> None:
        out.put(sse("token", {"job": job, "index": index, "delta": delta}))

    def work() -> None:
        try:
            out.put(sse("done", {"nodes": run(me, pos, body, token)}))
        except LoomError as exc:
            out.put(sse("error", error_body(type(exc).__name__, message_of(exc))))
        except Exception as exc:  # noqa: BLE001 - the stream has begun: report, do not drop
            out.put(sse("error", error_body("InternalError", str(exc))))
        finally:
            out.put(_END)

    threading.Thread(target=work, name="loomdb-generate", daemon=True).start()
    while (item := out.get()) is not _END:
        yield item
