"""Search over HTTP: `loomdb search` in its `--json` shape, limited to what the caller
sees (`loomdb.front.links`)."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Query

from ...front import Door
from ...front.links import MAX_LIMIT
from ..schemas import ERRORS, ErrorOut, SearchOut, SearchStatusOut
from ..state import door

router = APIRouter(prefix="/api", responses=ERRORS, tags=["search"])
#: the longest query and filter value a request may carry (a query is a few words; the
#: page's box stops at 500 characters)
MAX_QUERY = 1000
MAX_FILTER = 1000


@router.get("/search", response_model=SearchOut, response_model_exclude_unset=True,
            responses={501: {"model": ErrorOut,
                             "description": "semantic or hybrid without the extra"}})
def search(q: str = Query(..., max_length=MAX_QUERY, description="The words (or meaning)."),
           tree: str | None = Query(None, max_length=MAX_FILTER),
           role: str | None = Query(None, max_length=MAX_FILTER),
           author: str | None = Query(None, max_length=MAX_FILTER),
           tag: str | None = Query(None, max_length=MAX_FILTER),
           kind: Literal["message", "document", "item"] | None = None,
           limit: int = Query(20, ge=1, le=MAX_LIMIT),
           mode: Literal["text", "semantic", "hybrid"] = "text",
           me: Door = Depends(door)) -> dict[str, Any]:
    """Messages, document revisions and collection items by their words (`text`), their
    meaning (`semantic`, with the `semantic` extra) or both fused (`hybrid`), best first."""
    return me.search(q, tree=tree, role=role, author=author, tag=tag, kind=kind,
                     limit=limit, mode=mode).answer()


@router.get("/search/status", response_model=SearchStatusOut,
            responses={501: {"model": ErrorOut, "description": "without the semantic extra"}})
def search_status(me: Door = Depends(door)) -> dict[str, int]:
    """How far semantic indexing has come (`loomdb search --status`): entries embedded,
    of how many, and how many wait (the operator's: counts over the whole store)."""
    return me.search.status()
