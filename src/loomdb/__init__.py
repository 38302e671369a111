"""loomdb: git for LLM conversations.

Every message is an immutable, content-addressed, hash-chained node; any node can be
continued, forked (a new ref, no copy), edited (a new version; what follows stays
attached), compacted, and turned into the exact context a model needs.

    import loomdb
    with loomdb.open("./.loomdb") as loom:
        tree, root = loom.new_tree("Hello", session="main")
        loom.append("main", "Hi! How can I help?", role="assistant")
        print(loom.context("main"))
"""

from __future__ import annotations

from .content import content_id, text, validate_blocks
from .errors import (
    AmbiguousName,
    CycleError,
    IntegrityError,
    InvalidInput,
    LoomError,
    MissingExtra,
    NotCompacted,
    NotFound,
    ProviderError,
    ReadOnlyStore,
    RefConflict,
    StoreBusy,
    TooLarge,
)
from .headish import Position
from .loom import Loom
from .model import Edge, Meta, Node, Ref, RefMove, Tree

__version__ = "0.1.0"


def open(db: str | None = None, **options: object) -> Loom:  # noqa: A001 - mirrors sqlite3.connect
    """Open the store at a folder or URL (default: $LOOMDB_URL, $LOOMDB_HOME, ./.loomdb)."""
    return Loom.open(db, **options)  # type: ignore[arg-type]


__all__ = [
    "AmbiguousName", "CycleError", "Edge", "IntegrityError", "InvalidInput", "Loom",
    "LoomError", "Meta", "MissingExtra", "Node", "NotCompacted", "NotFound", "Position",
    "ProviderError", "ReadOnlyStore", "Ref", "RefConflict", "RefMove", "StoreBusy", "TooLarge", "Tree",
    "content_id", "open", "text",
    "validate_blocks",
]
