"""Collection operations over a Loom: each one is one unit of work (one transaction).

Siblings are ordered by fractional keys (strings that sort between any two others), so
adding or moving an item rewrites that item's row only, whatever the number of moves.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import hooks
from ..addresses import resolve, title
from ..addresses import show as show_address
from ..content import check_text
from ..errors import CycleError, InvalidInput, MissingExtra, check_choice
from ..model import new_id, now
from ..naming import check_name
from ..storage_ops import storage
from ..store.areas import Unit
from . import COLLECTIONS, KINDS
from . import storage as S
from .lookup import _coll, _item
from .lookup import collection as collection
from .lookup import collection_by_id as collection_by_id
from .lookup import collections as collections
from .lookup import find as find
from .lookup import item as item
from .lookup import item_by_id as item_by_id
from .storage import Collection, Item

if TYPE_CHECKING:
    from ..loom import Loom


def _key_between(a: str | None, b: str | None) -> str:
    try:
        from fractional_indexing import generate_key_between
    except ImportError:
        raise MissingExtra("collection ordering", "collections") from None
    return str(generate_key_between(a, b))


def _check_tag(tag: str) -> str:
    if not isinstance(tag, str) or not 1 <= len(tag) <= 100 or tag != tag.strip():
        raise InvalidInput(f"tag {tag!r}", "tags are 1-100 characters without edge spaces")
    check_text(tag, f"tag {tag!r}")
    return tag


def _check_field(key: str, value: str | None = None) -> str:
    """A field's name and value are text every backend stores: no NUL (PostgreSQL
    refuses one, so SQLite must too, or its store could not be migrated), valid Unicode."""
    if not isinstance(key, str) or not 1 <= len(key) <= 100 or "=" in key:
        raise InvalidInput(f"field {key!r}", "field names are 1-100 characters without '='")
    check_text(key, f"field {key!r}")
    if value is not None and not isinstance(value, str):
        raise InvalidInput(f"field {key!r}", f"a value is text, got {type(value).__name__}")
    check_text(value, f"field {key!r} value")
    return key


# == collections ====================================================================
def pairs(values: Sequence[str], where: str) -> dict[str, str]:
    """`K=V` arguments (fields to set, `where` filters) as a mapping; every edge parses
    them alike."""
    out = {}
    for v in values:
        key, eq, value = v.partition("=")
        if not eq or not key:
            raise InvalidInput(f"{where} {v!r}", "expected K=V")
        out[key] = value
    return out


def new(loom: Loom, name: str, kind: str = "list") -> Collection:
    check_name("collection", name)
    check_choice("collection kind", kind, KINDS)
    with loom.unit(COLLECTIONS) as db:
        if S.find(db, name) is not None:
            raise InvalidInput(f"collection {name!r}", "already exists")
        coll = Collection(new_id(), name, kind, now())
        S.insert(db, coll)
        return coll


# == items ==========================================================================
def add(loom: Loom, name: str, entity: str, *, parent: str | None = None,
        after: str | None = None, tags: Sequence[str] = (),
        fields: Mapping[str, str] | None = None) -> Item:
    """Add an item pointing at `entity` (any address), last among its siblings unless
    placed `after` one."""
    target = resolve(loom, entity)
    for t in tags:
        _check_tag(t)
    for k, v in (fields or {}).items():
        _check_field(k, v)
    fields, found = _screened(loom, fields or {})
    with loom.unit(COLLECTIONS) as db:
        coll = _coll(db, name)
        parent_id, ord = _placement(db, coll, None, parent, after, first=False)
        it = Item(new_id(), coll.id, parent_id, ord, target.address, target.key, now())
        S.insert_item(db, it)
        S.add_tags(db, it.id, list(dict.fromkeys(tags)))
        for k, v in fields.items():
            S.set_field(db, it.id, k, v)
        storage(loom).note_findings(found, coll.id, it.id)
        return _reindexed(loom, db, coll, it.id)


def _screened(loom: Loom, fields: Mapping[str, str | None]) -> tuple[dict[str, Any], list[Any]]:
    """Field values under the store's secrets policy (a refused kind raises before
    anything is written); the findings to note once the item is known."""
    kept, found = storage(loom).screen({k: v for k, v in fields.items() if v}, "fields")
    return {**fields, **kept}, found


def _placement(db: Unit, coll: Collection, moving: Item | None, parent: str | None,
               after: str | None, *, first: bool) -> tuple[str | None, str]:
    """(parent id, ordering key) for an item placed under `parent` / after `after`."""
    parent_id = moving.parent if moving is not None else None
    if parent is not None:
        if coll.kind != "tree":
            raise InvalidInput(f"coll:{coll.name}", f"a {coll.kind} is flat; only a tree nests")
        parent_id = _item(db, coll, parent).id
        if moving is not None:
            _refuse_cycle(db, coll, moving.id, parent_id)
    anchor = _item(db, coll, after) if after is not None else None
    if anchor is not None:
        if parent is not None and anchor.parent != parent_id:
            raise InvalidInput(f"--after {after}", f"is not a child of {parent}")
        parent_id = anchor.parent
        if moving is not None and anchor.id == moving.id:
            raise InvalidInput(f"--after {after}", "an item cannot follow itself")
    siblings = [(o, i) for o, i in S.sibling_keys(db, coll.id, parent_id)
                if moving is None or i != moving.id]
    if first:
        return parent_id, _key_between(None, siblings[0][0] if siblings else None)
    if anchor is None:
        return parent_id, _key_between(siblings[-1][0] if siblings else None, None)
    at = [i for _, i in siblings].index(anchor.id)
    nxt = siblings[at + 1][0] if at + 1 < len(siblings) else None
    if nxt == anchor.ord:  # two keys made equal by concurrent writers: spread them
        nxt = None if at + 2 >= len(siblings) else siblings[at + 2][0]
    return parent_id, _key_between(anchor.ord, nxt)


def _refuse_cycle(db: Unit, coll: Collection, item_id: str, parent_id: str) -> None:
    at: str | None = parent_id
    while at is not None:
        if at == item_id:
            raise CycleError(f"coll:{coll.name}/{item_id}", "cannot move an item under itself")
        up = S.item(db, coll.id, at)
        at = up.parent if up else None


def move(loom: Loom, name: str, item_spec: str, *, parent: str | None = None,
         after: str | None = None, first: bool = False) -> Item:
    """Move an item: under `parent`, after a sibling, or first. One row changes."""
    if after is not None and first:
        raise InvalidInput("coll move", "give --after or --first, not both")
    with loom.unit(COLLECTIONS) as db:
        coll = _coll(db, name)
        it = _item(db, coll, item_spec)
        parent_id, ord = _placement(db, coll, it, parent, after, first=first)
        S.place(db, it.id, parent_id, ord)
        return _one(db, coll, it.id)


def tag(loom: Loom, name: str, item_spec: str, tags: Sequence[str],
        remove: bool = False) -> Item:
    for t in tags:
        _check_tag(t)
    with loom.unit(COLLECTIONS) as db:
        coll = _coll(db, name)
        it = _item(db, coll, item_spec)
        (S.remove_tags if remove else S.add_tags)(db, it.id, list(dict.fromkeys(tags)))
        return _reindexed(loom, db, coll, it.id)


def set_fields(loom: Loom, name: str, item_spec: str, fields: Mapping[str, str | None]) -> Item:
    """Set fields (a None or empty value removes the field)."""
    for k, v in fields.items():
        _check_field(k, v)
    fields, found = _screened(loom, fields)
    with loom.unit(COLLECTIONS) as db:
        coll = _coll(db, name)
        it = _item(db, coll, item_spec)
        for k, v in fields.items():
            S.set_field(db, it.id, k, v or None)
        storage(loom).note_findings(found, coll.id, it.id)
        return _reindexed(loom, db, coll, it.id)


def remove(loom: Loom, name: str, item_spec: str) -> list[str]:
    """Remove an item and everything nested under it; returns the removed ids."""
    with loom.unit(COLLECTIONS) as db:
        coll = _coll(db, name)
        it = _item(db, coll, item_spec)
        children: dict[str | None, list[str]] = {}
        for x in S.items(db, coll.id):
            children.setdefault(x.parent, []).append(x.id)
        gone, todo = [], [it.id]
        while todo:
            cur = todo.pop()
            gone.append(cur)
            todo.extend(children.get(cur, []))
        S.delete_items(db, gone)
        for item_id in gone:
            hooks.entities_removed(loom, f"coll:{name}/{item_id}")
        return gone


def _one(db: Unit, coll: Collection, item_id: str) -> Item:
    found = S.item(db, coll.id, item_id)
    assert found is not None
    return found


def _reindexed(loom: Loom, db: Unit, coll: Collection, item_id: str) -> Item:
    it = _one(db, coll, item_id)
    _index(loom, coll, it)
    return it


def _index(loom: Loom, coll: Collection, it: Item) -> None:
    """Give the item's words to the areas that index text (search), in this unit."""
    words = [it.entity, *it.tags, *(f"{k} {v}" for k, v in it.fields.items())]
    hooks.entity_written(loom, f"coll:{coll.name}/{it.id}", "item", " ".join(words))


def scrub_fields(loom: Loom, sub: hooks.Scrub) -> list[str]:
    """Spans replaced in every item field's value (`sub`); the items changed, each
    indexed again."""
    changed: list[str] = []
    with loom.unit(COLLECTIONS) as db:
        rows = db.execute("SELECT f.item_id, f.key, f.value, c.id, c.name, c.kind, c.created_at"
                          " FROM coll_fields f JOIN coll_items i ON i.id = f.item_id"
                          " JOIN coll_collections c ON c.id = i.collection_id")
        colls: dict[str, Collection] = {}
        for item_id, key, value, *held in rows:
            new, n = sub(str(value))
            if n:
                S.set_field(db, str(item_id), str(key), new)
                colls[str(item_id)] = Collection(*(str(v) for v in held))
        for item_id, found in colls.items():
            _reindexed(loom, db, found, item_id)
            changed.append(f"coll:{found.name}/{item_id}")
    return changed


def reindex(loom: Loom) -> int:
    """Put every item of every collection in the search index (again); how many. A
    store copy rebuilds the index with it rather than copying the index."""
    done = 0
    with loom.unit(COLLECTIONS) as db:
        for coll in S.every(db):
            for it in S.items(db, coll.id):
                _index(loom, coll, it)
                done += 1
    return done


# == reading ========================================================================
def ordered(loom: Loom, name: str) -> tuple[Collection, list[Item]]:
    """A collection's items in display order: siblings by key, children right after
    their parent (depth-first), each with its depth."""
    with loom.unit(COLLECTIONS) as db:
        coll = _coll(db, name)
        found = S.items(db, coll.id)
    children: dict[str | None, list[Item]] = {}
    for it in found:
        children.setdefault(it.parent, []).append(it)
    out: list[Item] = []
    todo = [(it, 0) for it in reversed(children.get(None, []))]
    while todo:
        it, depth = todo.pop()
        it.depth = depth
        out.append(it)
        todo.extend((c, depth + 1) for c in reversed(children.get(it.id, [])))
    return coll, out


def show(loom: Loom, name: str, *, tag: str | None = None,
         where: Mapping[str, str] | None = None, group_by: str | None = None,
         sees: Callable[[str], bool] | None = None) -> dict[str, Any]:
    """`{"items": [...]}` in order, filtered by tag and fields; with `group_by`,
    `{"groups": {value: [...]}}` (items without the field under ""). Each item
    carries the `title` a person knows its entity by (a message's first words, a
    document's name). An item's entity is a stored reference: with `sees` (the
    reader's check of an address), one the reader does not see reads as a dangling
    one does, its address as written and nothing of the thing."""
    coll, found = ordered(loom, name)
    keep = [it for it in found
            if (tag is None or tag in it.tags)
            and all(it.fields.get(k) == v for k, v in (where or {}).items())]
    rows = []
    for it in keep:
        row = it.to_json()
        shown, dangling = show_address(loom, it.entity_key, it.entity)
        if not dangling and sees is not None and not sees(shown):
            shown, dangling = it.entity, True
        row["entity"], row["title"] = shown, title(loom, it.entity_key, shown, dangling)
        if dangling:
            row["dangling"] = True
        rows.append(row)
    head = {"collection": coll.name, "kind": coll.kind}
    if group_by is None:
        return {**head, "items": rows}
    groups: dict[str, list[dict[str, Any]]] = {}
    for row, it in zip(rows, keep, strict=True):
        groups.setdefault(it.fields.get(group_by, ""), []).append(row)
    return {**head, "groups": groups}


def holders(loom: Loom, key: str) -> list[tuple[str, str]]:
    with loom.unit(COLLECTIONS) as db:
        return S.holders(db, key)


def item_tags(loom: Loom, item_id: str) -> list[str]:
    with loom.unit(COLLECTIONS) as db:
        return S.tags_of(db, item_id)


def entity_keys(loom: Loom) -> set[str]:
    """Every key an item points at (garbage collection keeps what they name)."""
    with loom.unit(COLLECTIONS) as db:
        return set(S.entity_keys(db))
