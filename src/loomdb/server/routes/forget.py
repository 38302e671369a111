"""Forgetting over HTTP: delete a node or a tree, redact a node, read the record
(`loomdb delete`, `redact`, `forgotten` in their `--json` shapes). Each resolves the
name against the caller first: another user's node is the same 404 as an unknown one,
and a forget that would reach another user's trees (shared content) is refused
(`loomdb.front.forget`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict, Field

from ...front import Door
from ...front.forget import MAX_LOG
from ..schemas import ERRORS
from ..state import door

router = APIRouter(prefix="/api", responses=ERRORS, tags=["forget"])


class RedactIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reason: str | None = Field(None, max_length=1000)


@router.delete("/nodes/{headish:path}")
def delete_node(headish: str, force: bool = False, dry_run: bool = False,
                reason: str | None = Query(None, max_length=1000),
                me: Door = Depends(door)) -> dict[str, Any]:
    """Delete the node and everything created from it. Refs at or below it make it a
    409 unless `force=true`, which deletes them too. `dry_run=true` answers what would
    go (`ids`, the `refs` it would take) and writes nothing."""
    return me.forget.delete(headish, force=force, reason=reason, dry_run=dry_run).to_json()


@router.delete("/trees/{tree_id}")
def delete_tree(tree_id: str, force: bool = False, dry_run: bool = False,
                reason: str | None = Query(None, max_length=1000),
                me: Door = Depends(door)) -> dict[str, Any]:
    """Delete a whole tree (its refs too with `force=true`; `dry_run=true`: what would
    go, nothing written)."""
    return me.forget.delete_tree(tree_id, force=force, reason=reason,
                                 dry_run=dry_run).to_json()


@router.post("/nodes/{headish:path}/redact")
def redact_node(headish: str, body: RedactIn | None = None,
                me: Door = Depends(door)) -> dict[str, Any]:
    """Erase the node's content everywhere it is stored; it stays as a tombstone."""
    return me.forget.redact(headish, reason=body.reason if body else None).to_json()


@router.get("/forgotten")
def forgotten(tree: str | None = None, limit: int = Query(100, ge=1, le=MAX_LOG),
              me: Door = Depends(door)) -> list[dict[str, Any]]:
    """The record of forgetting, newest first (the lines about trees you see)."""
    return me.forget.log(tree=tree, limit=limit)
