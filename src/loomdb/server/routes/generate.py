"""Generation over HTTP: N alternatives per model, optionally streamed as server-sent
events while the model writes.

A stream is `token` events (`{"job", "index", "delta"}`: which model, which
alternative, the new text) ending in one `done` event holding `{"nodes"}`, or an
`error` event holding `{"error": {"type", "message"}}`. The answers are stored exactly
as without streaming (one transaction, with provenance).
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, StreamingResponse

from ...errors import LoomError
from ...headish import Position
from ...users import Access
from ..errors import body as error_body
from ..errors import message_of
from ..schemas import ERRORS, GenerateIn, NodeIds
from ..state import ServerState, access, state_of

router = APIRouter(prefix="/api/nodes", responses=ERRORS, tags=["nodes"])
_END = object()


@router.post("/{headish:path}/generate", status_code=201, response_model=NodeIds,
             responses={201: {"content": {"text/event-stream": {}}}})
def generate(headish: str, body: GenerateIn, request: Request,
             who: Access = Depends(access)) -> Any:
    """Continuations at `headish` as sibling nodes; a session named there moves to the
    first. `"stream": true` answers with server-sent events (see the module docstring)."""
    state = state_of(request)
    with state.using():
        pos = who.position(headish)
    if not body.stream:
        return JSONResponse({"nodes": run(state, pos, body, None)}, status_code=201)
    return StreamingResponse(events(state, pos, body), status_code=201,
                             media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def run(state: ServerState, pos: Position, body: GenerateIn, stream: Any) -> list[str]:
    """Generate and store: read the context, ask the models (the in-process model one
    request at a time), store the answers in one transaction. A buffer tree commits its
    draft first, so it goes through the library's one call."""
    from ... import buffer  # noqa: F401  (registers buffer trees' own way to generate)
    from ...compaction import maybe_compact
    from ...generation import generate_at, pick_models, store
    from ...providers.clients import complete_many
    from ...providers.served import check_request

    with state.using() as lm:
        ctx = lm.context(pos)
        # only the operator's served aliases, never redirected by options, bounded
        check_request(body.models, body.n, ctx["options"], state.config, state.limits)
        if lm.tree(pos.tree).mode == "buffer":
            result = generate_at(lm, pos, models=body.models, n=body.n,
                                 max_tokens=body.max_tokens, stream=stream,
                                 config=state.config, environ=state.environ)
            return [n.id for n in result.nodes]
        specs = pick_models(lm, body.models, ctx, state.config, state.environ)
    with state.model_lock:
        results = complete_many([(spec, ctx) for spec in specs], body.n,
                                max_tokens=body.max_tokens, stream=stream,
                                blob_reader=state.loom.blob, environ=state.environ,
                                return_exceptions=True)
    answers = [a for r in results if isinstance(r, list) for a in r]
    failed = [r for r in results if isinstance(r, BaseException)]
    if not answers:
        raise failed[0]
    with state.using() as lm:
        written = store(lm, pos, ctx, answers)
        if written.moved and written.session:
            maybe_compact(lm, written.session, config=state.config, environ=state.environ)
    return [n.id for n in written.nodes]


def sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def events(state: ServerState, pos: Position, body: GenerateIn) -> Iterator[str]:
    """Run the generation on a worker thread; relay its tokens as they come."""
    out: queue.Queue[Any] = queue.Queue()

    def token(job: int, index: int, delta: str) -> None:
        out.put(sse("token", {"job": job, "index": index, "delta": delta}))

    def work() -> None:
        try:
            out.put(sse("done", {"nodes": run(state, pos, body, token)}))
        except LoomError as exc:
            out.put(sse("error", error_body(type(exc).__name__, message_of(exc))))
        except Exception as exc:  # noqa: BLE001 - the stream has begun: report, do not drop
            out.put(sse("error", error_body("InternalError", str(exc))))
        finally:
            out.put(_END)

    threading.Thread(target=work, name="loomdb-generate", daemon=True).start()
    while (item := out.get()) is not _END:
        yield item
