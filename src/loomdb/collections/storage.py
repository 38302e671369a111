"""The collections area's SQL: every function takes the unit it runs in."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..store.areas import Unit

#: characters of an id (a ULID): a longer prefix names nothing
ID_CHARS = 26


@dataclass(frozen=True)
class Collection:
    id: str
    name: str
    kind: str
    created_at: str

    def to_json(self) -> dict[str, object]:
        """As `coll list --json` lists it (and `coll new --json` answers)."""
        return {"collection": self.name, "kind": self.kind}


@dataclass
class Item:
    id: str
    collection_id: str
    parent: str | None
    ord: str
    entity: str
    entity_key: str
    created_at: str
    tags: list[str] = field(default_factory=list)
    fields: dict[str, str] = field(default_factory=dict)
    depth: int = 0

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "entity": self.entity, "parent": self.parent,
                "depth": self.depth, "tags": self.tags, "fields": self.fields}


_COLL = "SELECT id, name, kind, created_at FROM coll_collections"
_ITEM = ("SELECT id, collection_id, parent_id, ord, entity, entity_key, created_at "
         "FROM coll_items")


def find(db: Unit, name: str) -> Collection | None:
    row = db.one(f"{_COLL} WHERE name = ?", (name,))
    return Collection(*row) if row else None


def by_id(db: Unit, coll_id: str) -> Collection | None:
    row = db.one(f"{_COLL} WHERE id = ?", (coll_id,))
    return Collection(*row) if row else None


def names_like(db: Unit, name: str) -> list[str]:
    return [r[0] for r in db.execute(
        "SELECT name FROM coll_collections WHERE name >= ? AND name < ? ORDER BY name LIMIT 10",
        (name[:3], name[:3] + "\uffff"))]


def insert(db: Unit, coll: Collection) -> None:
    db.execute("INSERT INTO coll_collections VALUES (?, ?, ?, ?)",
               (coll.id, coll.name, coll.kind, coll.created_at))


def item(db: Unit, coll_id: str, item_id: str) -> Item | None:
    row = db.one(f"{_ITEM} WHERE id = ? AND collection_id = ?", (item_id, coll_id))
    return _with_extras(db, [Item(*row)])[0] if row else None


def item_anywhere(db: Unit, item_id: str) -> Item | None:
    row = db.one(f"{_ITEM} WHERE id = ?", (item_id,))
    return Item(*row) if row else None


def item_ids_like(db: Unit, coll_id: str, prefix: str) -> list[str]:
    """Item ids starting with `prefix` (a range, never a LIKE pattern: `%` and `_` in
    it are characters, and no length makes SQLite's pattern too complex)."""
    if len(prefix) > ID_CHARS:
        return []
    start = prefix.upper()
    return [r[0] for r in db.execute(
        "SELECT id FROM coll_items WHERE collection_id = ? AND id >= ? AND id < ?"
        " ORDER BY id LIMIT 1001", (coll_id, start, start + "\uffff"))]


def items(db: Unit, coll_id: str) -> list[Item]:
    """Every item of a collection in sibling order (parents grouped), tags and fields on."""
    rows = db.execute(f"{_ITEM} WHERE collection_id = ? ORDER BY ord, id", (coll_id,))
    return _with_extras(db, [Item(*r) for r in rows])


def _with_extras(db: Unit, found: list[Item]) -> list[Item]:
    if not found:
        return found
    by_id = {i.id: i for i in found}
    coll = found[0].collection_id
    for item_id, tag in db.execute(
            "SELECT t.item_id, t.tag FROM coll_tags t JOIN coll_items i ON i.id = t.item_id "
            "WHERE i.collection_id = ? ORDER BY t.tag", (coll,)):
        if item_id in by_id:
            by_id[item_id].tags.append(tag)
    for item_id, key, value in db.execute(
            "SELECT f.item_id, f.key, f.value FROM coll_fields f JOIN coll_items i "
            "ON i.id = f.item_id WHERE i.collection_id = ? ORDER BY f.key", (coll,)):
        if item_id in by_id:
            by_id[item_id].fields[key] = value
    return found


def sibling_keys(db: Unit, coll_id: str, parent: str | None) -> list[tuple[str, str]]:
    """(ord, id) of the children of `parent` (None: the top level), in order."""
    if parent is None:
        rows = db.execute("SELECT ord, id FROM coll_items WHERE collection_id = ? "
                          "AND parent_id IS NULL ORDER BY ord, id", (coll_id,))
    else:
        rows = db.execute("SELECT ord, id FROM coll_items WHERE collection_id = ? "
                          "AND parent_id = ? ORDER BY ord, id", (coll_id, parent))
    return [(str(o), str(i)) for o, i in rows]


def insert_item(db: Unit, it: Item) -> None:
    db.execute("INSERT INTO coll_items VALUES (?, ?, ?, ?, ?, ?, ?)",
               (it.id, it.collection_id, it.parent, it.ord, it.entity, it.entity_key,
                it.created_at))


def place(db: Unit, item_id: str, parent: str | None, ord: str) -> None:
    db.execute("UPDATE coll_items SET parent_id = ?, ord = ? WHERE id = ?",
               (parent, ord, item_id))


def add_tags(db: Unit, item_id: str, tags: Sequence[str]) -> None:
    for tag in tags:
        db.execute("INSERT INTO coll_tags VALUES (?, ?) ON CONFLICT DO NOTHING", (item_id, tag))


def remove_tags(db: Unit, item_id: str, tags: Sequence[str]) -> None:
    for tag in tags:
        db.execute("DELETE FROM coll_tags WHERE item_id = ? AND tag = ?", (item_id, tag))


def set_field(db: Unit, item_id: str, key: str, value: str | None) -> None:
    db.execute("DELETE FROM coll_fields WHERE item_id = ? AND key = ?", (item_id, key))
    if value is not None:
        db.execute("INSERT INTO coll_fields VALUES (?, ?, ?)", (item_id, key, value))


def delete_items(db: Unit, ids: Sequence[str]) -> None:
    for item_id in ids:
        db.execute("DELETE FROM coll_tags WHERE item_id = ?", (item_id,))
        db.execute("DELETE FROM coll_fields WHERE item_id = ?", (item_id,))
        db.execute("DELETE FROM coll_items WHERE id = ?", (item_id,))


def tags_of(db: Unit, item_id: str) -> list[str]:
    return [r[0] for r in db.execute("SELECT tag FROM coll_tags WHERE item_id = ? ORDER BY tag",
                                     (item_id,))]


def entity_keys(db: Unit) -> list[str]:
    """Every key an item points at (gc keeps them)."""
    return [r[0] for r in db.execute("SELECT DISTINCT entity_key FROM coll_items")]


def holders(db: Unit, key: str) -> list[tuple[str, str]]:
    """(collection name, item id) of items pointing at a key or one of its revisions."""
    return [(str(n), str(i)) for n, i in db.execute(
        "SELECT c.name, i.id FROM coll_items i JOIN coll_collections c ON c.id = i.collection_id "
        "WHERE i.entity_key = ? OR substr(i.entity_key, 1, ?) = ? ORDER BY i.id",
        (key, len(key) + 1, key + "@"))]


def every(db: Unit) -> list[Collection]:
    """Every collection, by name."""
    return [Collection(*r) for r in db.execute(f"{_COLL} ORDER BY name")]
