"""Collections: the `loomdb coll` commands over HTTP, in their `--json` shapes.

Names are unique in the whole store; on a store with users each collection is its
creator's, and an item may point only at what its adder sees (`loomdb.front.sight`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Depends, Query

from ...errors import InvalidInput
from ...front import Door
from ...front.collections import pairs
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
from ..state import door

router = APIRouter(prefix="/api/collections", responses=ERRORS, tags=["collections"])


@router.get("", response_model=CollectionsOut)
def list_collections(me: Door = Depends(door)) -> dict[str, Any]:
    """The caller's collections."""
    return {"collections": [c.to_json() for c in me.collections.list()]}


@router.post("", response_model=CollectionOut, status_code=201)
def new_collection(body: NewCollection, me: Door = Depends(door)) -> dict[str, Any]:
    """A collection: a `list`, a `tree` (items nest), `tagged` or a `table`."""
    return me.collections.new(body.name, body.kind).to_json()


@router.post("/{name}/items", response_model=ItemId, status_code=201)
def add(name: str, body: ItemIn, me: Door = Depends(door)) -> dict[str, str]:
    """An item pointing at any address the caller sees, last among its siblings unless
    placed `after` one (under `parent` in a tree)."""
    it = me.collections.add(name, body.entity, parent=body.parent, after=body.after,
                            tags=body.tags, fields=body.fields)
    return {"item": it.id}


@router.post("/{name}/items/{item}/move", response_model=ItemMoved)
def move(name: str, item: str, body: MoveIn, me: Door = Depends(door)) -> dict[str, Any]:
    """Move an item under `parent`, after a sibling, or `first` (one row changes)."""
    it = me.collections.move(name, item, parent=body.parent, after=body.after,
                             first=body.first)
    return {"item": it.id, "parent": it.parent}


@router.post("/{name}/items/{item}/tags", response_model=ItemTags)
def tag(name: str, item: str, body: TagsIn, me: Door = Depends(door)) -> dict[str, Any]:
    """Add tags to an item (or, with `remove`, take them off); answers its tags."""
    it = me.collections.tag(name, item, body.tags, remove=body.remove)
    return {"item": it.id, "tags": it.tags}


@router.patch("/{name}/items/{item}/fields", response_model=ItemFields)
def set_fields(name: str, item: str,
               body: dict[str, str | None] = Body(..., examples=[{"status": "done",
                                                                 "owner": None}]),
               me: Door = Depends(door)) -> dict[str, Any]:
    """Set an item's fields; a null (or empty) value removes the field."""
    if not body:
        raise InvalidInput("fields", "give at least one field")
    it = me.collections.set_fields(name, item, body)
    return {"item": it.id, "fields": it.fields}


@router.delete("/{name}/items/{item}", response_model=Removed)
def remove(name: str, item: str, me: Door = Depends(door)) -> dict[str, Any]:
    """Remove an item and everything nested under it."""
    return {"removed": me.collections.remove(name, item)}


@router.get("/{name}", response_model=CollectionShown, response_model_exclude_unset=True)
def show(name: str, tag: str | None = None,
         where: list[str] = Query([], description="K=V: only items whose field K is V."),
         group_by: str | None = Query(None, description="Group the items by a field."),
         me: Door = Depends(door)) -> dict[str, Any]:
    """Items in order (a tree depth-first), filtered by tag and fields; with
    `group_by`, `{"groups": {value: items}}` (items without the field under "")."""
    return me.collections.show(name, tag=tag, where=pairs(where, "where"), group_by=group_by)
