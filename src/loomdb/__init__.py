"""loomdb: git for LLM conversations.

Every message is an immutable, content-addressed, hash-chained node; any node can be
continued, forked (a new ref, no copy), edited (a new version; what follows stays
attached), compacted, and turned into the exact context a model needs.

    import loomdb
    with loomdb.open("./.loomdb") as loom:
        tree, root = loom.new_tree("Hello", session="main")
        loom.append("main", "Hi! How can I help?", role="assistant")
        print(loom.context("main"))

`loomdb.Loom` (what `open` returns) is the one front door: storage, generation,
buffers, import and export are all its methods; `loomdb.edge` maps its typed errors
to exit codes, HTTP statuses and MCP errors.
"""

from __future__ import annotations

from .api import Buffer, Loom, copy_store, load_providers, open
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
    StoreUnavailable,
    TooLarge,
    Unauthorized,
    UsageError,
)
from .generation import Generated
from .headish import Position
from .model import Edge, Meta, Node, Ref, RefMove, Tree
from .treeview import TreeView

__version__ = "0.1.0"

__all__ = [
    "AmbiguousName", "Buffer", "CycleError", "Edge", "Generated", "IntegrityError",
    "InvalidInput", "Loom", "LoomError", "Meta", "MissingExtra", "Node", "NotCompacted",
    "NotFound", "Position", "ProviderError", "ReadOnlyStore", "Ref", "RefConflict", "RefMove", "StoreBusy",
    "StoreUnavailable", "TooLarge", "Tree", "TreeView", "Unauthorized", "UsageError", "content_id", "copy_store",
    "load_providers", "open", "text", "validate_blocks",
]
