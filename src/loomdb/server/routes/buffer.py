"""Buffer trees as one document: its text with authorship, its draft, the continuations
beside any position, switching to one, editing a span, and the likeliest next tokens
(`loomdb.front.buffer`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from pydantic import Field

from ...front import Door
from ..schemas import ERRORS, BufferIn, BufferOut, Strict
from ..state import door

router = APIRouter(prefix="/api/buffer", responses=ERRORS, tags=["buffer"])


class SpanIn(Strict):
    start: int = Field(ge=0, description="The first character replaced (0: the start).")
    end: int = Field(ge=0, description="Just past the last character replaced.")
    text: str = Field(description="What the range becomes (empty: delete it).")


class SwitchIn(Strict):
    node: str = Field(min_length=1, max_length=200,
                      description="A branch or version of the tree (from /alternatives).")


class NextIn(Strict):
    top: int = Field(8, ge=1, le=20, description="How many tokens to offer.")
    models: list[str] = Field(default_factory=list, max_length=1)


@router.post("/{headish:path}/span", response_model=BufferOut,
             response_model_exclude_unset=True)
def edit_span(headish: str, body: SpanIn, authorship: bool = False,
              me: Door = Depends(door)) -> dict[str, Any]:
    """Replace the characters `start:end` of the document with `text` (new versions of
    the nodes it touches, selected through the session or view named)."""
    return me.buffer.edit_span(headish, body.start, body.end, body.text, authorship=authorship)


@router.post("/{headish:path}/switch")
def switch(headish: str, body: SwitchIn, me: Door = Depends(door)) -> dict[str, Any]:
    """Make the session or view show another branch or version (`loomdb buffer switch`)."""
    return me.buffer.switch(headish, body.node)


@router.post("/{headish:path}/next")
def next_tokens(headish: str, body: NextIn, me: Door = Depends(door)) -> dict[str, Any]:
    """Single-token looming: the likeliest next tokens of the document with their
    probabilities, best first (one token asked of a served model; nothing written)."""
    return {"tokens": me.buffer.next_tokens(headish, top=body.top, models=body.models)}


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
