"""Search across every message, document revision and collection item: full text
(SQLite FTS5, PostgreSQL tsvector) with one results contract (see service). Fed by
hooks (`hooks.py`): the core's writes, and the text the other areas give it."""

from ..store.areas import Area

#: an index over the other areas' content: a store copy rebuilds it (see rebuild.py)
SEARCH = Area("search", "loomdb.search", derived=True, rebuild="loomdb.search.rebuild:rebuild",
              hooks="loomdb.search.hooks:HOOKS")

__all__ = ["SEARCH"]
