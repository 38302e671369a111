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

import importlib
import typing

from .errors import (
    AmbiguousName,
    CycleError,
    IntegrityError,
    InvalidInput,
    LoomError,
    MergeConflict,
    MissingExtra,
    NotCompacted,
    NotFound,
    ProviderError,
    ReadOnlyStore,
    RefConflict,
    RefsInTheWay,
    StoreBusy,
    StoreUnavailable,
    TooLarge,
    Unauthorized,
    UsageError,
)

if typing.TYPE_CHECKING:
    from .api import Buffer, Loom, copy_store, load_providers, open
    from .content import content_id, text, validate_blocks
    from .generation import Generated
    from .headish import Position
    from .model import Edge, Meta, Node, Ref, RefMove, Tree
    from .treeview import TreeView

__version__ = "0.1.0"

__all__ = [
    "AmbiguousName", "Buffer", "CycleError", "Edge", "Generated", "IntegrityError",
    "InvalidInput", "Loom", "LoomError", "MergeConflict", "Meta", "MissingExtra", "Node", "NotCompacted",
    "NotFound", "Position", "ProviderError", "ReadOnlyStore", "Ref", "RefConflict", "RefMove", "RefsInTheWay", "StoreBusy",
    "StoreUnavailable", "TooLarge", "Tree", "TreeView", "Unauthorized", "UsageError", "content_id", "copy_store",
    "load_providers", "open", "text", "validate_blocks",
]

#: where each public name lives, imported on first use: `import loomdb` (and every CLI
#: call, which imports the package) stays cheap, and a command loads what it uses
_LAZY = {
    "Buffer": "api", "Loom": "api", "copy_store": "api", "load_providers": "api", "open": "api",
    "content_id": "content", "text": "content", "validate_blocks": "content",
    "Generated": "generation", "Position": "headish", "TreeView": "treeview",
    "Edge": "model", "Meta": "model", "Node": "model", "Ref": "model", "RefMove": "model",
    "Tree": "model",
}


def __getattr__(name: str) -> typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'loomdb' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
