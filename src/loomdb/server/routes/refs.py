"""Refs: list, create (a session at an existing node is a fork), log, select, delete."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict

from ...users import Access
from ..schemas import ERRORS, Deleted, RefIn, RefLog, RefOut, RefsOut
from ..state import access, state_of

router = APIRouter(prefix="/api/refs", responses=ERRORS, tags=["refs"])


class SelectIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    node: str


@router.get("", response_model=RefsOut)
def list_refs(request: Request, kind: Literal["session", "view", "bookmark"] | None = None,
              tree: str | None = None, who: Access = Depends(access)) -> dict[str, Any]:
    """The caller's refs (of one kind, of one tree)."""
    with state_of(request).using():
        tree_id = who.tree(tree).id if tree else None
        return {"refs": [r.to_json() for r in who.refs(kind, tree_id)]}


@router.post("", response_model=RefOut, status_code=201)
def create_ref(body: RefIn, request: Request, who: Access = Depends(access)) -> dict[str, Any]:
    """A session (a fork when `at` is an existing node), a view, or a bookmark at `at`."""
    with state_of(request).using() as lm:
        pos = who.position(body.at)
        if body.kind == "bookmark":
            ref = lm.bookmark(pos, body.name)
        else:
            ref = lm.fork(pos, body.name, kind=body.kind)
        return dict(ref.to_json())


@router.get("/{name:path}/log", response_model=RefLog, response_model_by_alias=True)
def ref_log(name: str, request: Request, who: Access = Depends(access)) -> dict[str, Any]:
    """Every move of a ref: when, from, to, by whom, why."""
    with state_of(request).using() as lm:
        ref = who.ref(name)  # the lines of this ref only, even if the name is made again
        moves = [m.to_json() for m in lm.ref_log(name) if m.tree in (ref.tree, None)]
        return {"name": name, "moves": moves}


@router.post("/{name:path}/select", response_model=RefOut)
def select(name: str, body: SelectIn, request: Request,
           who: Access = Depends(access)) -> dict[str, Any]:
    """Make a session or view use a given version of a slot (the alternatives switcher)."""
    with state_of(request).using() as lm:
        who.ref(name)
        return dict(lm.select(name, who.position(body.node)).to_json())


@router.get("/{name:path}", response_model=RefOut)
def show_ref(name: str, request: Request, who: Access = Depends(access)) -> dict[str, Any]:
    """Where a ref points."""
    with state_of(request).using():
        return dict(who.ref(name).to_json())


@router.delete("/{name:path}", response_model=Deleted)
def delete_ref(name: str, request: Request, who: Access = Depends(access)) -> dict[str, str]:
    """Delete a ref (its nodes stay)."""
    with state_of(request).using() as lm:
        lm.delete_ref(name, expect=who.ref(name))  # the ref checked, not a later one
    return {"deleted": name}
