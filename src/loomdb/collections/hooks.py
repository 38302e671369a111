"""What the collections area offers the other areas (`loomdb.hooks`): `coll:`
addresses and item keys, an item's tags, the items pointing at a thing, the keys it
holds, and its items' words for the search index."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..hooks import AreaHooks, Scrub, Target
from . import lookup as K
from . import service

if TYPE_CHECKING:
    from ..loom import Loom


class CollectionHooks(AreaHooks):
    schemes = ("coll", "item")

    def republish(self, loom: Loom) -> int:
        return service.reindex(loom)

    def resolve(self, loom: Loom, scheme: str, spec: str) -> Target:
        name, _, item = spec.partition("/")
        coll = K.collection(loom, name)
        if not item:
            return Target(f"coll:{name}", f"coll:{coll.id}", "collection")
        found = K.item(loom, name, item)
        return Target(f"coll:{name}/{found.id}", f"item:{found.id}", "item")

    def show(self, loom: Loom, scheme: str, rest: str) -> str:
        if scheme == "coll":
            return f"coll:{K.collection_by_id(loom, rest).name}"
        coll_name, item_id = K.item_by_id(loom, rest)
        return f"coll:{coll_name}/{item_id}"

    def tags(self, loom: Loom, entity: str) -> list[str]:
        return service.item_tags(loom, entity.rpartition("/")[2])

    def backlinks(self, loom: Loom, target: Target) -> list[dict[str, Any]]:
        return [{"from": f"coll:{name}/{item}", "to": target.address, "type": "item"}
                for name, item in service.holders(loom, target.key)]

    def held_keys(self, loom: Loom) -> set[str]:
        return service.entity_keys(loom)

    def scrub_texts(self, loom: Loom, sub: Scrub) -> list[str]:
        return service.scrub_fields(loom, sub)


HOOKS = CollectionHooks()
