"""The agents' inbox over HTTP (`loomdb.front.agents`): tool calls waiting for a person,
approved, amended or denied; proposed messages between sessions, approved, amended or
denied; the personas and their rules; and a turn's steps as they are written.

A user sees and decides only the calls on their own trees; messages and personas are
the store's own traffic and settings, the operator's (a user gets 401). A turn runs
inside the request that approves its call (or in another process: the CLI, a script),
so the page follows it by asking `GET /api/agents/turns/{node}` again while it runs:
one cheap read of the turn's chain whose `stamp` (its last node) changes with each
step, and which answers the same whichever process runs the turn.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from pydantic import Field

from ...front import Door
from ..schemas import ERRORS, Strict
from ..state import door

router = APIRouter(prefix="/api/agents", responses=ERRORS, tags=["agents"])

#: the longest reason a denial records
REASON_MAX = 2000


class DenyIn(Strict):
    reason: str | None = Field(None, max_length=REASON_MAX,
                               description="Why: the model reads it with the refusal.")


class AmendCallIn(Strict):
    inputs: dict[str, dict[str, Any]] = Field(
        description="The input each amended call runs with, by the call's id.")


class AmendIn(Strict):
    text: str = Field(description="What reaches the target session instead.")


@router.get("/pending")
def pending(me: Door = Depends(door)) -> dict[str, Any]:
    """Tool calls waiting for a decision on the caller's trees, oldest first."""
    return {"pending": [p.to_json() for p in me.agents.pending()]}


@router.post("/pending/{node:path}/approve")
def approve(node: str, me: Door = Depends(door)) -> dict[str, Any]:
    """Run the call's tools and resume its turn; answers how the turn ended."""
    return dict(me.agents.approve(node).to_json())


@router.post("/pending/{node:path}/amend")
def amend(node: str, body: AmendCallIn, me: Door = Depends(door)) -> dict[str, Any]:
    """Run the call with the person's inputs instead of the model's (its node gets a
    version holding them) and resume its turn."""
    return dict(me.agents.amend_call(node, body.inputs).to_json())


@router.post("/pending/{node:path}/deny")
def deny(node: str, body: DenyIn | None = None, me: Door = Depends(door)) -> dict[str, Any]:
    """Refuse the call: the tools that wait for approval get an error result, unrun,
    and the turn resumes so the model reads the refusal."""
    return dict(me.agents.deny(node, reason=body.reason if body else None).to_json())


@router.get("/turns/{node:path}")
def turn(node: str, me: Door = Depends(door)) -> dict[str, Any]:
    """The turn through `node`, its steps so far; `state` is `answer`, `pending`,
    `denied` or `open` (it may still write); `stamp` changes with every step."""
    return me.agents.steps(node)


@router.get("/messages")
def messages(supervisor: str | None = None, me: Door = Depends(door)) -> dict[str, Any]:
    """Proposed messages waiting for a supervisor (every supervisor's by default)."""
    return {"messages": [m.to_json() for m in me.agents.inbox(supervisor)]}


@router.post("/messages/{mid}/approve")
def approve_message(mid: str, me: Door = Depends(door)) -> dict[str, Any]:
    """Deliver the message as written to its target session."""
    msg, node = me.agents.approve_message(mid)
    return {"message": msg.to_json(), "node": node.id}


@router.post("/messages/{mid}/amend")
def amend_message(mid: str, body: AmendIn, me: Door = Depends(door)) -> dict[str, Any]:
    """Deliver the supervisor's text instead (the original is kept with the node)."""
    msg, node = me.agents.amend(mid, body.text)
    return {"message": msg.to_json(), "node": node.id}


@router.post("/messages/{mid}/deny")
def deny_message(mid: str, body: DenyIn | None = None,
                 me: Door = Depends(door)) -> dict[str, Any]:
    """Refuse the message: nothing reaches its target."""
    return {"message": me.agents.reject(mid, reason=body.reason if body else None).to_json()}


@router.get("/personas")
def personas(me: Door = Depends(door)) -> dict[str, Any]:
    """Every persona with its rules (tools allowed, denied, waiting for approval)."""
    return {"personas": [p.to_json() for p in me.agents.personas()]}


@router.get("/personas/{name}")
def persona(name: str, me: Door = Depends(door)) -> dict[str, Any]:
    """One persona's settings."""
    return dict(me.agents.persona(name).to_json())
