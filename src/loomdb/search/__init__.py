"""Search across every message, document revision and collection item: full text
(SQLite FTS5, PostgreSQL tsvector) with one results contract (see service)."""

from ..store.areas import Area

SEARCH = Area("search", "loomdb.search")

__all__ = ["SEARCH"]
