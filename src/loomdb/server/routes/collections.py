"""Collections: the `loomdb coll` commands over HTTP, in their `--json` shapes.

Names are unique in the whole store; on a store with users each collection is its
creator's, and an item may point only at what its adder sees (see `..areas`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Depends, Query, Request

from ...collections import service as K
from ...errors import InvalidInput
from ..areas import Areas, areas
from ..schemas import (
    ERRORS,
    CollectionOut,
    CollectionShown,
    CollectionsOut,
    ItemFields,
    ItemId,
    ItemIn,
    ItemMoved,
    ItemTags,
    MoveIn,
    NewCollection,
    Removed,
    TagsIn,
)
from ..state import state_of

router = APIRouter(prefix="/api/collections", responses=ERRORS, tags=["collections"])


@router.get("", response_model=CollectionsOut)
def list_collections(request: Request, view: Areas = Depends(areas)) -> dict[str, Any]:
    """The caller's collections."""
    with state_of(request).using():
        return {"collections": [c.to_json() for c in view.collections()]}


@router.post("", response_model=CollectionOut, status_code=201)
def new_collection(body: NewCollection, request: Request,
                   view: Areas = Depends(areas)) -> dict[str, Any]:
    """A collection: a `list`, a `tree` (items nest), `tagged` or a `table`."""
    with state_of(request).using():
        return view.new_collection(body.name, body.kind).to_json()


@router.post("/{name}/items", response_model=ItemId, status_code=201)
def add(name: str, body: ItemIn, request: Request,
        view: Areas = Depends(areas)) -> dict[str, str]:
    """An item pointing at any address the caller sees, last among its siblings unless
    placed `after` one (under `parent` in a tree)."""
    with state_of(request).using() as lm, view.atomic():
        view.collection(name)
        entity = view.address(body.entity)
        it = K.add(lm, name, entity, parent=body.parent, after=body.after,
                   tags=body.tags, fields=body.fields)
    return {"item": it.id}


@router.post("/{name}/items/{item}/move", response_model=ItemMoved)
def move(name: str, item: str, body: MoveIn, request: Request,
         view: Areas = Depends(areas)) -> dict[str, Any]:
    """Move an item under `parent`, after a sibling, or `first` (one row changes)."""
    with state_of(request).using() as lm, view.atomic():
        view.collection(name)
        it = K.move(lm, name, item, parent=body.parent, after=body.after, first=body.first)
    return {"item": it.id, "parent": it.parent}


@router.post("/{name}/items/{item}/tags", response_model=ItemTags)
def tag(name: str, item: str, body: TagsIn, request: Request,
        view: Areas = Depends(areas)) -> dict[str, Any]:
    """Add tags to an item (or, with `remove`, take them off); answers its tags."""
    with state_of(request).using() as lm, view.atomic():
        view.collection(name)
        it = K.tag(lm, name, item, body.tags, remove=body.remove)
    return {"item": it.id, "tags": it.tags}


@router.patch("/{name}/items/{item}/fields", response_model=ItemFields)
def set_fields(name: str, item: str, request: Request,
               body: dict[str, str | None] = Body(..., examples=[{"status": "done",
                                                                 "owner": None}]),
               view: Areas = Depends(areas)) -> dict[str, Any]:
    """Set an item's fields; a null (or empty) value removes the field."""
    if not body:
        raise InvalidInput("fields", "give at least one field")
    with state_of(request).using() as lm, view.atomic():
        view.collection(name)
        it = K.set_fields(lm, name, item, body)
    return {"item": it.id, "fields": it.fields}


@router.delete("/{name}/items/{item}", response_model=Removed)
def remove(name: str, item: str, request: Request,
           view: Areas = Depends(areas)) -> dict[str, Any]:
    """Remove an item and everything nested under it."""
    with state_of(request).using() as lm, view.atomic():
        view.collection(name)
        return {"removed": K.remove(lm, name, item)}


@router.get("/{name}", response_model=CollectionShown, response_model_exclude_unset=True)
def show(name: str, request: Request, tag: str | None = None,
         where: list[str] = Query([], description="K=V: only items whose field K is V."),
         group_by: str | None = Query(None, description="Group the items by a field."),
         view: Areas = Depends(areas)) -> dict[str, Any]:
    """Items in order (a tree depth-first), filtered by tag and fields; with
    `group_by`, `{"groups": {value: items}}` (items without the field under "")."""
    with state_of(request).using() as lm:
        view.collection(name)
        return K.show(lm, name, tag=tag, where=K.pairs(where, "where"), group_by=group_by)

