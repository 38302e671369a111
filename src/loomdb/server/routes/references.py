"""Links between any two addresses, and backlinks: `loomdb link` and `loomdb backlinks`
over HTTP, in their `--json` shapes. On a store with users both ends of a link must be
the caller's, and backlinks list only links whose both ends they see (see `..areas`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query, Request

from ..areas import Areas, areas
from ..schemas import ERRORS, LinkIn, LinkOut, LinksOut
from ..state import state_of

router = APIRouter(prefix="/api", responses=ERRORS, tags=["references"])


@router.post("/links", response_model=LinkOut, status_code=201)
def link(body: LinkIn, request: Request, view: Areas = Depends(areas)) -> dict[str, Any]:
    """Reference `to` from `from`: between two nodes the core's edge (`annotation` or
    `link`), between any other addresses (`tree:`, `doc:`, `coll:`, `sha256:`) a
    reference of any type that backlinks find."""
    with state_of(request).using():
        return view.link(body.from_, body.to, body.type)


@router.get("/backlinks", response_model=LinksOut, response_model_exclude_unset=True)
def backlinks(request: Request,
              entity: str = Query(..., description="Any address: node, tree:ID, "
                                  "doc:NAME[@REV], coll:NAME[/ITEM], sha256:..."),
              view: Areas = Depends(areas)) -> dict[str, Any]:
    """Everything that references `entity` (a reference whose end is gone is marked
    `dangling`)."""
    with state_of(request).using():
        return {"links": view.backlinks(entity)}
