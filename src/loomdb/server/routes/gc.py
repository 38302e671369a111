"""Garbage collection over HTTP: `loomdb gc` in its `--json` shape.

A collection looks at the whole store, every user's things at once, so only the
operator runs it (`loomdb.front.forget.Gc`): served only where the store is one
person's (no users, loopback), like the `/v1` gateway; a store with users refuses it
(401) and its operator runs `loomdb gc`."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fastapi import APIRouter, Depends

from ...front import Door
from ...front.forget import DEFAULT_GRACE
from ..schemas import ERRORS, GcIn, GcOut
from ..state import operator_door

router = APIRouter(prefix="/api", responses=ERRORS, tags=["gc"])


@router.post("/gc", response_model=GcOut)
def gc(body: GcIn | None = None,
       me: Door = Depends(operator_door("garbage collection sees every user's things: "
                                        "the store's operator runs `loomdb gc`"))
       ) -> dict[str, Any]:
    """Purge (or with `dry_run`, list) the trees whose time in the trash is over, then
    delete (or count) contents and blobs nothing reachable uses; anything newer than
    `grace` seconds (default an hour) is kept."""
    body = body or GcIn()
    grace = DEFAULT_GRACE if body.grace is None else timedelta(seconds=body.grace)
    purged = me.gc.purge(dry_run=body.dry_run)
    return {**me.gc.collect(dry_run=body.dry_run, grace=grace), "purged": purged}
