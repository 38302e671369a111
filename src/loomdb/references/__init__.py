"""Cross-references between any addressable things, and backlinks (see service)."""

from ..store.areas import Area

REFERENCES = Area("references", "loomdb.references")

__all__ = ["REFERENCES"]
