"""Search across every message, document revision and collection item: full text
(SQLite FTS5, PostgreSQL tsvector) with one results contract (see service)."""

from ..store.areas import Area

#: an index over the other areas' content: a store copy rebuilds it (see rebuild.py)
SEARCH = Area("search", "loomdb.search", derived=True, rebuild="loomdb.search.rebuild:rebuild")

__all__ = ["SEARCH"]
