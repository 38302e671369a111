"""Rebuilding the search index of a store that received a copy (`loomdb migrate`).

The index is derived from the content of the other areas, so a copy does not carry it
(its FTS5 table cannot be copied row by row, and its entry numbers are each store's
own): `SEARCH` names `rebuild` as its hook instead, and the copy runs it at the target
inside its own transaction, so the copy commits searchable or not at all. The hook is
named on the Area and imported by name because the copy lives below the areas
(`loomdb.transfer` may not import them); the areas whose entities it indexes are
asked through their hooks (`loomdb.hooks`), not imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import hooks
from .index import catch_up

if TYPE_CHECKING:
    from ..loom import Loom


def rebuild(loom: Loom) -> dict[str, int]:
    """Index every message the index lacks, and every document revision and collection
    item (again); how many of each. Messages were queued as the copy inserted their
    nodes (by the area's write hook, or by its first migration); the other areas'
    entities are given again by each area the store has (`republish`)."""
    counts = {"messages": catch_up(loom)}
    given = hooks.republish(loom)
    for area, what in (("documents", "documents"), ("collections", "items")):
        if area in given:
            counts[what] = given.pop(area)
    return counts | given
