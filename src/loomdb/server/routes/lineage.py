"""The caller's trees with their lineage, as the web page's Trees view groups them
(`Door.trees.lineage`): spawned children under their parents, imports marked, each
session's fork point."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from ...front import Door
from ..schemas import ERRORS
from ..state import door

router = APIRouter(prefix="/api/lineage", responses=ERRORS, tags=["page"])


@router.get("")
def trees_lineage(archived: bool = False, me: Door = Depends(door)) -> dict[str, Any]:
    """Each of the caller's trees (newest first) with `parent` (`{"kind": "spawned",
    "tree", "title", "node", "session", "message"}` or null), `imported` (`{"format",
    "conversation"}` or null), `refs` (sessions and views, each with `forked_from`:
    `{"ref", "node", "message"}` or null) and `head` (where its thread opens)."""
    return {"trees": me.trees.lineage(archived=archived)}
