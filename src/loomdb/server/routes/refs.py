"""Refs: list, create (a session at an existing node is a fork), log, select, switch, delete
(`loomdb.front.trees.Refs`)."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict

from ...front import Door
from ..schemas import ERRORS, Deleted, RefIn, RefLog, RefOut, RefsOut
from ..state import door

router = APIRouter(prefix="/api/refs", responses=ERRORS, tags=["refs"])


class SelectIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    node: str


@router.get("", response_model=RefsOut)
def list_refs(kind: Literal["session", "view", "bookmark"] | None = None,
              tree: str | None = None, me: Door = Depends(door)) -> dict[str, Any]:
    """The caller's refs (of one kind, of one tree)."""
    return {"refs": [r.to_json() for r in me.refs.list(kind, tree)]}


@router.post("", response_model=RefOut, status_code=201)
def create_ref(body: RefIn, me: Door = Depends(door)) -> dict[str, Any]:
    """A session (a fork when `at` is an existing node), a view, or a bookmark at `at`."""
    return dict(me.refs.create(body.at, body.name, kind=body.kind).to_json())


@router.get("/{name:path}/log", response_model=RefLog, response_model_by_alias=True)
def ref_log(name: str, me: Door = Depends(door)) -> dict[str, Any]:
    """Every move of a ref: when, from, to, by whom, why."""
    return {"name": name, "moves": [m.to_json() for m in me.refs.log(name)]}


@router.post("/{name:path}/select", response_model=RefOut)
def select(name: str, body: SelectIn, me: Door = Depends(door)) -> dict[str, Any]:
    """Make a session or view use a given version of a slot (the alternatives switcher)."""
    return dict(me.refs.select(name, body.node).to_json())


@router.post("/{name:path}/switch", response_model=RefOut)
def switch(name: str, body: SelectIn, me: Door = Depends(door)) -> dict[str, Any]:
    """Show another version or alternative in a session or view, as a chat does: a
    version is selected (and its own answers shown when it has some), an alternative
    moves the ref to the newest leaf below it (the page's switchers, Regenerate)."""
    return dict(me.refs.switch(name, body.node).to_json())


@router.get("/{name:path}", response_model=RefOut)
def show_ref(name: str, me: Door = Depends(door)) -> dict[str, Any]:
    """Where a ref points."""
    return dict(me.refs.get(name).to_json())


@router.delete("/{name:path}", response_model=Deleted)
def delete_ref(name: str, me: Door = Depends(door)) -> dict[str, str]:
    """Delete a ref (its nodes stay)."""
    me.refs.delete(name)
    return {"deleted": name}
