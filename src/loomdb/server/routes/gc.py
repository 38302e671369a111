"""Garbage collection over HTTP: `loomdb gc` in its `--json` shape.

A collection looks at the whole store, every user's things at once, so it is served
only where the store is one person's (no users, loopback), like the `/v1` gateway; a
store with users refuses it: its operator runs `loomdb gc`."""

from __future__ import annotations

from datetime import timedelta

from fastapi import APIRouter, Request

from ...gc import service as G
from ...users import Access
from ..schemas import ERRORS, GcIn, GcOut
from ..state import single_user, state_of

router = APIRouter(prefix="/api", responses=ERRORS, tags=["gc"])


@router.post("/gc", response_model=GcOut)
def gc(request: Request, body: GcIn | None = None) -> dict[str, int]:
    """Delete (or with `dry_run`, count) contents and blobs nothing reachable uses;
    anything newer than `grace` seconds (default an hour) is kept."""
    body = body or GcIn()
    who: Access = single_user(request, "garbage collection sees every user's things: "
                              "the store's operator runs `loomdb gc`")
    grace = G.DEFAULT_GRACE if body.grace is None else timedelta(seconds=body.grace)
    with state_of(request).using():
        return G.collect(who.loom, dry_run=body.dry_run, grace=grace)
