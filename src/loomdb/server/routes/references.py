"""Links between any two addresses, and backlinks: `loomdb link` and `loomdb backlinks`
over HTTP, in their `--json` shapes. On a store with users both ends of a link must be
the caller's, and backlinks list only links whose both ends they see
(`loomdb.front.links`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query

from ...front import Door
from ..schemas import ERRORS, LinkIn, LinkOut, LinksOut
from ..state import door

router = APIRouter(prefix="/api", responses=ERRORS, tags=["references"])


@router.post("/links", response_model=LinkOut, status_code=201)
def link(body: LinkIn, me: Door = Depends(door)) -> dict[str, Any]:
    """Reference `to` from `from`: between two nodes the core's edge (`annotation` or
    `link`), between any other addresses (`tree:`, `doc:`, `coll:`, `sha256:`) a
    reference of any type that backlinks find."""
    return me.references.link(body.from_, body.to, body.type)


@router.get("/backlinks", response_model=LinksOut, response_model_exclude_unset=True)
def backlinks(entity: str = Query(..., description="Any address: node, tree:ID, "
                                  "doc:NAME[@REV], coll:NAME[/ITEM], sha256:..."),
              me: Door = Depends(door)) -> dict[str, Any]:
    """Everything that references `entity` (a reference whose end is gone is marked
    `dangling`)."""
    return {"links": me.references.backlinks(entity)}
