"""Finding collections and items by name or id: reads only.

Apart from the service so that the area's hooks (`coll:NAME/ITEM` addresses, see
`hooks.py`) find a collection or an item without the operations that resolve
addresses themselves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import NotFound
from ..limits import check_reference
from ..store.areas import Unit
from . import COLLECTIONS
from . import storage as S
from .storage import Collection, Item

if TYPE_CHECKING:
    from ..loom import Loom


def _coll(db: Unit, name: str) -> Collection:
    coll = S.find(db, name)
    if coll is None:
        raise NotFound("collection", name, S.names_like(db, name))
    return coll


def find(loom: Loom, name: str) -> Collection | None:
    """The collection of that name, or None."""
    with loom.unit(COLLECTIONS) as db:
        return S.find(db, name)


def collection(loom: Loom, name: str) -> Collection:
    with loom.unit(COLLECTIONS) as db:
        return _coll(db, name)


def collection_by_id(loom: Loom, coll_id: str) -> Collection:
    with loom.unit(COLLECTIONS) as db:
        coll = S.by_id(db, coll_id)
    if coll is None:
        raise NotFound("collection", coll_id)
    return coll


def collections(loom: Loom) -> list[Collection]:
    with loom.unit(COLLECTIONS) as db:
        return S.every(db)


def _item(db: Unit, coll: Collection, spec: str) -> Item:
    found = S.item(db, coll.id, check_reference(f"item of coll:{coll.name}", spec))
    if found is None and len(spec) >= 4:
        ids = S.item_ids_like(db, coll.id, spec)
        if len(ids) > 1:
            from ..errors import AmbiguousName

            raise AmbiguousName(f"item of coll:{coll.name}", spec, ids)
        found = S.item(db, coll.id, ids[0]) if ids else None
    if found is None:
        raise NotFound(f"item of coll:{coll.name}", spec)
    return found


def item(loom: Loom, name: str, spec: str) -> Item:
    with loom.unit(COLLECTIONS) as db:
        return _item(db, _coll(db, name), spec)


def item_by_id(loom: Loom, item_id: str) -> tuple[str, str]:
    """(collection name, item id) of an item wherever it is now."""
    with loom.unit(COLLECTIONS) as db:
        found = S.item_anywhere(db, item_id)
        coll = S.by_id(db, found.collection_id) if found else None
    if found is None or coll is None:
        raise NotFound("collection item", item_id)
    return coll.name, found.id
