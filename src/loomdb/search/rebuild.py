"""Rebuilding the search index of a store that received a copy (`loomdb migrate`).

The index is derived from the content of the other areas, so a copy does not carry it
(its FTS5 table cannot be copied row by row, and its entry numbers are each store's
own): `SEARCH` names `rebuild` as its hook instead, and the copy runs it at the target
inside its own transaction, so the copy commits searchable or not at all. The hook is
named on the Area and imported by name because the copy lives below the areas
(`loomdb.transfer` may not import them) while this module may import the areas whose
content it indexes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..collections import COLLECTIONS
from ..collections import service as collections
from ..documents import DOCUMENTS
from ..documents import service as documents
from .index import catch_up

if TYPE_CHECKING:
    from ..loom import Loom


def rebuild(loom: Loom) -> dict[str, int]:
    """Index every message the index lacks, and every document revision and collection
    item (again); how many of each. Messages were queued as the copy inserted their
    nodes (by the area's trigger, or by its first migration); revisions and items are
    indexed by their own services, which are asked here, for the areas the store has."""
    counts = {"messages": catch_up(loom)}
    if loom.has_area(DOCUMENTS):
        counts["documents"] = documents.reindex(loom)
    if loom.has_area(COLLECTIONS):
        counts["items"] = collections.reindex(loom)
    return counts
