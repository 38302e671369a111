"""Versioned documents: a revision DAG per document over the shared content layer, with
branches moved by compare-and-swap, three-way merge and unified diffs (see service)."""

from ..store.areas import Area

DOCUMENTS = Area("documents", "loomdb.documents", hooks="loomdb.documents.hooks:HOOKS")

__all__ = ["DOCUMENTS"]
