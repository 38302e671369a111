"""The git verbs of conversations: diff two paths, merge a branch back, replay a path's
user turns onto a new base or model, the tail-fork (`loomdb.front.branches`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from ...front import Door
from ..schemas import ERRORS
from ..state import door

router = APIRouter(prefix="/api/branches", responses=ERRORS, tags=["branches"])


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MergeIn(Strict):
    branch: str = Field(description="A headish: the branch whose outcome comes back.")
    into: str = Field(description="A headish: the line it comes back to (a session moves).")
    text: str | None = Field(None, description="Carry this text.")
    summary: str | None = Field(None, description="Carry this served model's summary.")


class ReplayIn(Strict):
    path: str = Field(description="A headish: the conversation whose user turns are sent.")
    session: str = Field(description="Name of the new session.")
    onto: str | None = Field(None, description="Where to start (default: the first message).")
    models: list[str] = Field(default_factory=list, max_length=64)
    n: int = Field(1, ge=1, le=64)
    max_tokens: int | None = Field(None, ge=1, le=2**31 - 1)
    generate: bool = True


class FreshIn(Strict):
    at: str = Field(description="A headish: the message the new tree starts from.")
    name: str = Field(description="Name of the session at the new tree's root.")
    summary: str | None = Field(None, description="The root holds this served model's "
                                "summary of the path up to `at` instead.")


class Side(BaseModel):
    headish: str
    node: str
    tree: str


class DiffOut(BaseModel):
    left: Side
    right: Side
    ancestor: str | None
    common: int
    changed: int
    entries: list[dict[str, Any]]


class MergeOut(BaseModel):
    node: str
    tree: str
    merged_from: dict[str, Any]
    created: bool


class ReplayOut(BaseModel):
    session: str
    tree: str
    onto: str
    ancestor: str | None
    turns: list[dict[str, Any]]
    stopped: str | None


class FreshOut(BaseModel):
    name: str
    node: str
    tree: str
    continued: dict[str, Any] | None


@router.get("/diff", response_model=DiffOut)
def diff(left: str, right: str, me: Door = Depends(door)) -> dict[str, Any]:
    """Two paths aligned from their common ancestor: one entry per message after it,
    `same`, `changed` (with `text_diff` and `tool_calls_differ`), `added` or `removed`."""
    return me.branches.diff(left, right)


@router.post("/merge", response_model=MergeOut, status_code=201)
def merge(body: MergeIn, me: Door = Depends(door)) -> dict[str, Any]:
    """A merge node appended to `into` whose sources are its head and the branch's tip;
    `created` is false when that tip was merged there already (nothing written)."""
    node, created = me.branches.merge(body.branch, body.into, text=body.text,
                                      summary=body.summary)
    return {"node": node.id, "tree": node.tree,
            "merged_from": (node.origin or {}).get("merged_from", {}), "created": created}


@router.post("/replay", response_model=ReplayOut, status_code=201)
def replay(body: ReplayIn, me: Door = Depends(door)) -> dict[str, Any]:
    """The user turns of `path` sent again onto `onto` as a new session, each answered
    (served models only) unless `generate` is false; `stopped` says why it ended early."""
    return me.branches.replay(body.path, body.session, onto=body.onto, models=body.models,
                              n=body.n, max_tokens=body.max_tokens,
                              generate=body.generate).to_json()


@router.post("/fresh", response_model=FreshOut, status_code=201)
def fresh(body: FreshIn, me: Door = Depends(door)) -> dict[str, Any]:
    """The tail-fork: a new tree whose root holds the message at `at` (nothing before
    it in the context), a session at the root, lineage "continued from" that message."""
    tree, root = me.branches.fork_fresh(body.at, body.name, summary=body.summary)
    return {"name": body.name, "node": root.id, "tree": tree.id,
            "continued": (tree.lineage or {}).get("continued")}
