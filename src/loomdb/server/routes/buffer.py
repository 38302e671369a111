"""Buffer trees as one document: its text with authorship, its draft, the continuations
beside any position (`loomdb.front.buffer`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from ...front import Door
from ..schemas import ERRORS, BufferIn, BufferOut
from ..state import door

router = APIRouter(prefix="/api/buffer", responses=ERRORS, tags=["buffer"])


@router.get("/{headish:path}/alternatives")
def alternatives(headish: str, index: str = "-1", me: Door = Depends(door)) -> dict[str, Any]:
    """The branches and versions that could fill path position `index` (0 = root)."""
    return dict(me.buffer.alternatives(headish, index).to_json())


@router.get("/{headish:path}", response_model=BufferOut, response_model_exclude_unset=True)
def show(headish: str, authorship: bool = False, me: Door = Depends(door)) -> dict[str, Any]:
    """The document at `headish` (the path's text and the ref's draft)."""
    return me.buffer.show(headish, authorship=authorship)


@router.post("/{headish:path}", response_model=BufferOut, response_model_exclude_unset=True)
def edit_draft(headish: str, body: BufferIn, authorship: bool = False,
               me: Door = Depends(door)) -> dict[str, Any]:
    """Append to the draft, or replace it; returns the document."""
    return me.buffer.edit_draft(headish, append=body.append, set=body.set,
                                authorship=authorship)
