"""Prompt pieces: the `loomdb piece` commands over HTTP, in their `--json` shapes.

Names are unique in the whole store; on a store with users each piece is its maker's,
and a thread may name only the caller's own pieces (`loomdb.front.pieces`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from ...front import Door
from ..schemas import ERRORS, PieceIn
from ..state import door

router = APIRouter(prefix="/api/pieces", responses=ERRORS, tags=["pieces"])


@router.get("")
def list_pieces(me: Door = Depends(door)) -> dict[str, Any]:
    """The caller's pieces and templates, by name, with their newest version."""
    return {"pieces": me.pieces.list()}


@router.post("", status_code=201)
def add_piece(body: PieceIn, me: Door = Depends(door)) -> dict[str, Any]:
    """A new version of a piece (made when new); the same text again adds nothing
    (`added` false)."""
    return me.pieces.add(body.name, body.text, kind=body.kind)


@router.get("/{name}/log")
def piece_log(name: str, me: Door = Depends(door)) -> dict[str, Any]:
    """A piece's versions, oldest first."""
    return {"name": name, "versions": me.pieces.log(name)}


@router.get("/{name}/used-by")
def piece_used_by(name: str, me: Door = Depends(door)) -> dict[str, Any]:
    """The messages of the caller's threads naming a piece."""
    return {"name": name, "used_by": me.pieces.used_by(name)}


@router.get("/{spec}")
def show_piece(spec: str, me: Door = Depends(door)) -> dict[str, Any]:
    """A version of a piece and its text: `NAME`, `NAME@N` or `NAME@HASH-PREFIX`."""
    return me.pieces.show(spec)
