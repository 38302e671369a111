"""Collections for a caller (`loom.collections`, `loom.as_(caller).collections`): the
collections service with the ownership rules of `loomdb.front.sight` (an item may
point only at what its adder sees)."""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from typing import Any

from ..collections import service as K
from ..collections.service import pairs
from ..collections.storage import Collection, Item
from .base import AreaDoor
from .sight import Seen


class Collections(AreaDoor):
    """Lists, trees, tagged sets and tables of items; a user's are theirs alone."""

    def list(self) -> builtins.list[Collection]:
        """The caller's collections."""
        found = K.collections(self.loom)
        if not self.sight.shared:
            return found
        keep = self.sight.who.visible_collections(c.id for c in found)
        return [c for c in found if c.id in keep]

    def new(self, name: str, kind: str = "list") -> Collection:
        """A collection (`list`, `tree`, `tagged`, `table`), the caller's."""
        with self.sight.atomic():
            self.sight.refuse_taken_collection(name)
            coll = K.new(self.loom, name, kind)
            self.sight.who.claim_collection(coll.id)
        return coll

    def add(self, name: str, entity: str, *, parent: str | None = None,
            after: str | None = None, tags: Sequence[str] = (),
            fields: Mapping[str, str] | None = None) -> Item:
        """An item pointing at any address the caller sees."""
        with self.sight.atomic():
            self.sight.collection(name)
            return K.add(self.loom, name, self.sight.address(entity), parent=parent,
                         after=after, tags=tags, fields=fields)

    def move(self, name: str, item: str, *, parent: str | None = None,
             after: str | None = None, first: bool = False) -> Item:
        """Move an item under `parent`, after a sibling, or `first`."""
        with self.sight.atomic():
            self.sight.collection(name)
            return K.move(self.loom, name, item, parent=parent, after=after, first=first)

    def tag(self, name: str, item: str, tags: Sequence[str], *,
            remove: bool = False) -> Item:
        """Add tags to an item (or take them off)."""
        with self.sight.atomic():
            self.sight.collection(name)
            return K.tag(self.loom, name, item, tags, remove=remove)

    def set_fields(self, name: str, item: str, fields: Mapping[str, str | None]) -> Item:
        """Set an item's fields; a null (or empty) value removes the field."""
        with self.sight.atomic():
            self.sight.collection(name)
            return K.set_fields(self.loom, name, item, fields)

    def remove(self, name: str, item: str) -> builtins.list[str]:
        """Remove an item and everything nested under it; the ids removed."""
        with self.sight.atomic():
            self.sight.collection(name)
            return K.remove(self.loom, name, item)

    def show(self, name: str, *, tag: str | None = None,
             where: Mapping[str, str] | None = None,
             group_by: str | None = None) -> dict[str, Any]:
        """Items in order, filtered by tag and fields, or grouped by a field; an item
        naming something the caller does not see reads as dangling."""
        self.sight.collection(name)
        sees = Seen(self.sight).address if self.sight.shared else None
        return K.show(self.loom, name, tag=tag, where=where, group_by=group_by, sees=sees)


__all__ = ["Collection", "Collections", "Item", "pairs"]
