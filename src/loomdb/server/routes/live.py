"""Live updates of a tree the caller sees, and of their approvals (`loomdb.server.live`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from ...front import Door
from ..schemas import ERRORS
from ..state import caller_key, door, state_of

#: what an event stream answers, as its documentation says
STREAM: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/event-stream": {}}, "description": "server-sent events"}}

router = APIRouter(prefix="/api", responses=ERRORS, tags=["trees"])


@router.get("/trees/{tree}/events", responses=STREAM)
def events(tree: str, request: Request, me: Door = Depends(door)) -> Response:
    """Server-sent events: `change` with the tree's stamp (its message count and where
    its refs point) whenever a message is added or a ref moves, by any process."""
    tree_id = me.live.tree(tree[:1000])
    return state_of(request).streams.stream(caller_key(me), lambda: me.live.stamp(tree_id),
                                            me.live.stamp(tree_id))


@router.get("/events", responses=STREAM)
def approvals(request: Request, me: Door = Depends(door)) -> Response:
    """Server-sent events: `change` with the caller's waiting tool calls
    (`{"pending": [[node, state], ...]}`) whenever one is asked for or decided."""
    return state_of(request).streams.stream(caller_key(me), me.live.approvals,
                                            me.live.approvals())
