"""Buffer trees as one document: its text with authorship, its draft, the continuations
beside any position."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request

from ... import buffer as B
from ...api import Loom
from ...errors import InvalidInput
from ...headish import Position
from ...users import Access
from ..schemas import ERRORS, BufferIn, BufferOut
from ..state import access, state_of

router = APIRouter(prefix="/api/buffer", responses=ERRORS, tags=["buffer"])


def document(lm: Loom, headish: str | Position, authorship: bool) -> dict[str, Any]:
    """`{"text", "spans"}` with authorship (each span says if a model wrote it), else
    `{"text", "draft"}` (as `loomdb buffer --json`)."""
    if authorship:
        doc = B.document(lm, headish)
        return {"text": doc.text, "draft": doc.draft,
                "spans": [{**s.to_json(), "model": s.model} for s in doc.spans]}
    pos = headish if isinstance(headish, Position) else lm.resolve(headish)
    return {"text": B.text(lm, pos), "draft": B.get_draft(lm, pos, strict=False)}


@router.get("/{headish:path}/alternatives")
def alternatives(headish: str, request: Request, index: str = "-1",
                 who: Access = Depends(access)) -> dict[str, Any]:
    """The branches and versions that could fill path position `index` (0 = root)."""
    with state_of(request).using() as lm:
        at = index if _is_int(index) else who.position(index).node
        return dict(B.alternatives(lm, who.position(headish), at).to_json())


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


@router.get("/{headish:path}", response_model=BufferOut, response_model_exclude_unset=True)
def show(headish: str, request: Request, authorship: bool = False,
         who: Access = Depends(access)) -> dict[str, Any]:
    """The document at `headish` (the path's text and the ref's draft)."""
    with state_of(request).using() as lm:
        return document(lm, who.position(headish), authorship)


@router.post("/{headish:path}", response_model=BufferOut, response_model_exclude_unset=True)
def edit_draft(headish: str, body: BufferIn, request: Request, authorship: bool = False,
               who: Access = Depends(access)) -> dict[str, Any]:
    """Append to the draft, or replace it; returns the document."""
    if (body.append is None) == (body.set is None):
        raise InvalidInput("body", "give exactly one of append, set")
    with state_of(request).using() as lm:
        pos = who.position(headish)  # resolved once: every step takes the Position
        if body.append is not None:
            B.append_draft(lm, pos, body.append)
        else:
            B.set_draft(lm, pos, body.set or "")
        return document(lm, pos, authorship)
