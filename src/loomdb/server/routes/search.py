"""Search over HTTP: `loomdb search` in its `--json` shape, limited to what the caller
sees (see `..areas`)."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Query, Request

from ...search import service as S
from ..areas import Areas, areas
from ..schemas import ERRORS, ErrorOut, SearchOut
from ..state import state_of

router = APIRouter(prefix="/api", responses=ERRORS, tags=["search"])


@router.get("/search", response_model=SearchOut, response_model_exclude_unset=True,
            responses={501: {"model": ErrorOut,
                             "description": "semantic or hybrid without the extra"}})
def search(request: Request, q: str = Query(..., description="The words (or meaning)."),
           tree: str | None = None, role: str | None = None, author: str | None = None,
           tag: str | None = None,
           kind: Literal["message", "document", "item"] | None = None,
           limit: int = Query(20, ge=1, le=S.MAX_LIMIT),
           mode: Literal["text", "semantic", "hybrid"] = "text",
           view: Areas = Depends(areas)) -> dict[str, Any]:
    """Messages, document revisions and collection items by their words (`text`), their
    meaning (`semantic`, with the `semantic` extra) or both fused (`hybrid`), best first."""
    with state_of(request).using():
        return {"hits": view.search(S.Query(q, tree, role, author, tag, kind, limit, mode))}
