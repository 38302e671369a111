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
def delete_tree(tree_id: str, force: bool = False, dry_run: bool = False, now: bool = False,
                reason: str | None = Query(None, max_length=1000),
                me: Door = Depends(door)) -> dict[str, Any]:
    """Move a whole tree, with its sessions and views, to the trash (its line of the
    trash: restorable until `purge_after`); `now=true` deletes it for good at once (refs
    of other trees it reaches too with `force=true`); `dry_run=true`: what would go,
    nothing written."""
    if dry_run:
        return me.forget.delete_tree(tree_id, force=force, reason=reason,
                                     dry_run=True).to_json()
    if now:
        return me.forget.purge_tree(tree_id, force=force, reason=reason).to_json()
    return me.forget.trash_tree(tree_id, reason=reason)


@router.get("/trash")
def trash(me: Door = Depends(door)) -> list[dict[str, Any]]:
    """The trees of yours in the trash, first purged first (`loomdb trash`)."""
    return me.forget.trash()


@router.post("/trash/{tree_id}/restore")
def restore(tree_id: str, me: Door = Depends(door)) -> dict[str, Any]:
    """Take a tree of yours out of the trash: it lists and searches again."""
    return me.forget.restore(tree_id)


class HoldIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    target: str = Field(..., min_length=1, max_length=300)
    reason: str | None = Field(None, max_length=1000)


@router.get("/holds")
def holds(me: Door = Depends(door)) -> list[dict[str, Any]]:
    """The holds on your trees and sessions (`loomdb hold`)."""
    return me.forget.holds()


@router.post("/holds")
def hold(body: HoldIn, me: Door = Depends(door)) -> dict[str, Any]:
    """Hold a tree (`tree:ID`) or a session of yours: retention never takes it."""
    return me.forget.hold(body.target, reason=body.reason)


@router.delete("/holds/{target:path}")
def unhold(target: str, me: Door = Depends(door)) -> dict[str, Any]:
    """Remove a hold on a tree (`tree:ID`) or a session of yours."""
    return me.forget.unhold(target)


@router.post("/nodes/{headish:path}/redact")
def redact_node(headish: str, body: RedactIn | None = None,
                me: Door = Depends(door)) -> dict[str, Any]:
    """Erase the node's content everywhere it is stored; it stays as a tombstone."""
    return me.forget.redact(headish, reason=body.reason if body else None).to_json()


class RedactSpansIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str | None = Field(None, max_length=1000)
    pattern: str | None = Field(None, max_length=1000)
    secret_type: str | None = Field(None, max_length=40)
    tree: str | None = Field(None, max_length=1000)
    dry_run: bool = True
    reason: str | None = Field(None, max_length=1000)


#: seconds a pattern sent over HTTP may spend on everything it reads
HTTP_PATTERN_SECONDS = 1.0


@router.post("/redact")
def redact_spans(body: RedactSpansIn, me: Door = Depends(door)) -> dict[str, Any]:
    """Erase a text (`text`), a regular expression's matches (`pattern`) or a kind of
    secret (`secret_type`) in every place of your trees it was copied (or `tree`),
    each span replaced by a marker; the nodes keep their ids. A dry run unless
    `dry_run` is false: what it would change, per tree."""
    return me.forget.redact_spans(text=body.text, pattern=body.pattern,
                                  secret_type=body.secret_type, tree=body.tree,
                                  dry_run=body.dry_run, reason=body.reason,
                                  seconds=HTTP_PATTERN_SECONDS).to_json()


@router.get("/stale")
def stale(tree: str | None = None, me: Door = Depends(door)) -> list[dict[str, str]]:
    """Derived values (compaction summaries) made from what was forgotten since."""
    return me.forget.stale(tree=tree)


@router.get("/forgotten")
def forgotten(tree: str | None = None, limit: int = Query(100, ge=1, le=MAX_LOG),
              me: Door = Depends(door)) -> list[dict[str, Any]]:
    """The record of forgetting, newest first (the lines about trees you see)."""
    return me.forget.log(tree=tree, limit=limit)
