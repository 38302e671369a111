"""Search over HTTP: `loomdb search` in its `--json` shape, limited to what the caller
sees (`loomdb.front.links`)."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Query

from ...front import Door
from ...front.links import MAX_LIMIT
from ..schemas import ERRORS, ErrorOut, SearchOut
from ..state import door

router = APIRouter(prefix="/api", responses=ERRORS, tags=["search"])


@router.get("/search", response_model=SearchOut, response_model_exclude_unset=True,
            responses={501: {"model": ErrorOut,
                             "description": "semantic or hybrid without the extra"}})
def search(q: str = Query(..., description="The words (or meaning)."),
           tree: str | None = None, role: str | None = None, author: str | None = None,
           tag: str | None = None,
           kind: Literal["message", "document", "item"] | None = None,
           limit: int = Query(20, ge=1, le=MAX_LIMIT),
           mode: Literal["text", "semantic", "hybrid"] = "text",
           me: Door = Depends(door)) -> dict[str, Any]:
    """Messages, document revisions and collection items by their words (`text`), their
    meaning (`semantic`, with the `semantic` extra) or both fused (`hybrid`), best first."""
    return {"hits": me.search(q, tree=tree, role=role, author=author, tag=tag, kind=kind,
                              limit=limit, mode=mode)}
