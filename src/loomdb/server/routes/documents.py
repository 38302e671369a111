"""Versioned documents: the `loomdb doc` commands over HTTP, in their `--json` shapes.

Names are unique in the whole store; on a store with users each document is its
creator's, and another user's answers 404 as an unknown one (`loomdb.front.sight`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query

from ...front import Door
from ..schemas import (
    ERRORS,
    BranchIn,
    CheckoutIn,
    CommitIn,
    ConflictOut,
    Deleted,
    DiffOut,
    DocumentAt,
    DocumentCreated,
    DocumentGraph,
    DocumentLog,
    DocumentShown,
    DocumentsOut,
    FromMessageIn,
    FromMessageOut,
    MergeIn,
    MergeOut,
    NewDocument,
    RevisionOut,
)
from ..state import door
from .nodes import content_of

router = APIRouter(prefix="/api/documents", responses=ERRORS, tags=["documents"])


@router.get("", response_model=DocumentsOut)
def list_documents(me: Door = Depends(door)) -> dict[str, Any]:
    """The caller's documents with their current branch and revision."""
    return {"documents": me.documents.list()}


@router.post("", response_model=DocumentCreated, status_code=201)
def new_document(body: NewDocument, me: Door = Depends(door)) -> dict[str, str]:
    """A document with its first revision on branch `main` (a name someone else holds
    is refused as taken)."""
    doc, rev = me.documents.new(body.name, content_of(body.text, body.content), body.message)
    return {"document": doc.name, "revision": rev.id}


@router.post("/from-message", response_model=FromMessageOut, status_code=201)
def from_message(body: FromMessageIn, me: Door = Depends(door)) -> dict[str, str]:
    """A document, or a new revision of one, whose content IS a message's (same id)."""
    doc, rev = me.documents.from_message(body.headish, body.name, body.message)
    return {"document": doc.name, "revision": rev.id, "content_id": rev.content_id}


@router.post("/{name}/revisions", response_model=RevisionOut, status_code=201)
def commit(name: str, body: CommitIn, me: Door = Depends(door)) -> dict[str, str]:
    """A new revision after the branch head (the current branch by default); 400 when
    nothing changed."""
    rev = me.documents.commit(name, content_of(body.text, body.content), body.message,
                              body.branch)
    return {"revision": rev.id}


@router.get("/{name}/log", response_model=DocumentLog)
def log(name: str, branch: str | None = None, me: Door = Depends(door)) -> dict[str, Any]:
    """Revisions reachable from a branch head (default: the current one), newest first."""
    return {"revisions": [r.log_json() for r in me.documents.log(name, branch)]}


@router.get("/{name}/graph", response_model=DocumentGraph)
def graph(name: str, me: Door = Depends(door)) -> dict[str, Any]:
    """The whole revision graph: every revision with its parents (oldest first), each
    branch's head and the current pointer; what the page draws the history from."""
    return me.documents.graph(name)


@router.post("/{name}/branches", response_model=DocumentAt, status_code=201)
def branch(name: str, body: BranchIn, me: Door = Depends(door)) -> dict[str, Any]:
    """A new branch at a revision or branch (default: the current revision)."""
    return me.documents.branch(name, body.name, body.at)


@router.post("/{name}/checkout", response_model=DocumentAt)
def checkout(name: str, body: CheckoutIn, me: Door = Depends(door)) -> dict[str, Any]:
    """Move the current pointer to a branch (commits follow it) or to a revision."""
    return me.documents.checkout(name, body.target)


@router.post("/{name}/merge", response_model=MergeOut, status_code=201,
             responses={409: {"model": ConflictOut}})
def merge(name: str, body: MergeIn, me: Door = Depends(door)) -> dict[str, Any]:
    """Merge a branch into the current one: a revision with both heads as parents. A
    conflict is 409 with its regions (`error.conflicts`) and writes nothing."""
    rev = me.documents.merge(name, body.branch, body.message)
    return {"revision": rev.id, "parents": list(rev.parents)}


@router.get("/{name}/diff", response_model=DiffOut)
def diff(name: str, from_: str = Query(..., alias="from"), to: str = Query(...),
         me: Door = Depends(door)) -> dict[str, str]:
    """A unified diff between two revisions (or branches) of a text document."""
    return {"diff": me.documents.diff(name, from_, to)}


@router.get("/{name}", response_model=DocumentShown, response_model_exclude_unset=True)
def show(name: str,
         at: str | None = Query(None, description="A revision (or prefix) or a branch."),
         me: Door = Depends(door)) -> dict[str, Any]:
    """The content at the current state, a revision or a branch: `text` for a text
    document, else `content` (blocks)."""
    return me.documents.show(name, at).to_json()


@router.delete("/{name}", response_model=Deleted)
def delete(name: str, me: Door = Depends(door)) -> dict[str, str]:
    """Delete a document (references to it then read as dangling)."""
    me.documents.delete(name)
    return {"deleted": name}
