"""Cross-references between any addressable things, and backlinks (see service); the
address grammar they use is `loomdb.addresses`, below every area."""

from ..store.areas import Area

REFERENCES = Area("references", "loomdb.references", hooks="loomdb.references.hooks:HOOKS")

__all__ = ["REFERENCES"]
