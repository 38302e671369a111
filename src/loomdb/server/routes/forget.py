"""Forgetting over HTTP: delete a node or a tree, redact a node, read the record
(`loomdb delete`, `redact`, `forgotten` in their `--json` shapes). Each resolves the
name against the caller first: another user's node is the same 404 as an unknown one,
and a forget that would reach another user's trees (shared content) is refused."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from ...forget import service as F
from ...users import Access
from ..schemas import ERRORS
from ..state import access, state_of

router = APIRouter(prefix="/api", responses=ERRORS, tags=["forget"])


class RedactIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reason: str | None = Field(None, max_length=1000)


def _actor(who: Access) -> str | None:
    return who.user.name if who.user is not None else None


@router.delete("/nodes/{headish:path}")
def delete_node(headish: str, request: Request, force: bool = False,
                reason: str | None = Query(None, max_length=1000),
                who: Access = Depends(access)) -> dict[str, Any]:
    """Delete the node and everything created from it. Refs at or below it make it a
    409 unless `force=true`, which deletes them too."""
    with state_of(request).using() as lm:
        pos = who.position(headish)
        done = F.delete(lm, headish, node=pos.node, force=force, reason=reason,
                        actor=_actor(who), within=who.visible)
    return done.to_json()


@router.delete("/trees/{tree_id}")
def delete_tree(tree_id: str, request: Request, force: bool = False,
                reason: str | None = Query(None, max_length=1000),
                who: Access = Depends(access)) -> dict[str, Any]:
    """Delete a whole tree (its refs too with `force=true`)."""
    with state_of(request).using() as lm:
        tree = who.tree(tree_id)
        done = F.delete(lm, f"tree:{tree.id}", force=force, reason=reason,
                        actor=_actor(who), within=who.visible)
    return done.to_json()


@router.post("/nodes/{headish:path}/redact")
def redact_node(headish: str, request: Request, body: RedactIn | None = None,
                who: Access = Depends(access)) -> dict[str, Any]:
    """Erase the node's content everywhere it is stored; it stays as a tombstone."""
    with state_of(request).using() as lm:
        pos = who.position(headish)
        done = F.redact(lm, headish, node=pos.node, reason=body.reason if body else None,
                        actor=_actor(who), within=who.visible)
    return done.to_json()


@router.get("/forgotten")
def forgotten(request: Request, tree: str | None = None,
              limit: int = Query(100, ge=1, le=F.MAX_LOG),
              who: Access = Depends(access)) -> list[dict[str, Any]]:
    """The record of forgetting, newest first (the lines about trees you see)."""
    with state_of(request).using() as lm:
        return F.log(lm, limit=limit, tree=tree, within=who.visible)
