"""Collections: ordered lists, trees, tagged sets and tables of items that point at any
addressable thing (see service)."""

from ..store.areas import Area

COLLECTIONS = Area("collections", "loomdb.collections", hooks="loomdb.collections.hooks:HOOKS")
KINDS = ("list", "tree", "tagged", "table")

__all__ = ["COLLECTIONS", "KINDS"]
