"""The storage interface every backend implements, and nothing more.

A backend stores rows and answers indexed queries; it knows nothing of headish names,
version selection, hashing rules or context. Those live above it (graph, refs,
context, verify) and are enforced once for all backends. A backend must run each
`transaction()` as one atomic unit that serializes writers (SQLite: BEGIN IMMEDIATE;
PostgreSQL: a transaction plus row locks), so a compare-and-swap inside it is exact.

Walks return plain tuples in the order of `PATH_COLUMNS` because the path of a
10,000-turn thread is the hottest read in loomdb; every other read returns values
from `loomdb.model`.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

from ..model import Anchor, Edge, Meta, Node, Ref, RefMove, Tree

#: columns of a walk row, head first (only what path resolution and context need:
#: every extra column costs an object per node on a 10,000-turn path)
PATH_COLUMNS = ("id", "slot", "depth", "role", "kind", "body", "options", "cache", "flags")
ID, SLOT, DEPTH, ROLE, KIND, BODY, OPTIONS, CACHE, FLAGS = range(9)

#: node flags: the node stores version selections / has extra continuation sources
HAS_SELECTIONS = 1
HAS_SOURCES = 2


class Backend(ABC):
    """Rows and indexed queries for one store; see the module docstring for the contract."""

    url: str

    # -- lifecycle -------------------------------------------------------------------
    @abstractmethod
    def migrate(self) -> list[str]:
        """Apply pending migrations in order; return the names applied (none when current)."""

    @abstractmethod
    def applied_migrations(self) -> list[str]:
        """Names of the migrations recorded as applied, oldest first."""

    #: serializes this backend object's transactions (set by each backend's __init__)
    _lock: threading.RLock
    _depth: int = 0

    def transaction(self) -> AbstractContextManager[None]:
        """One atomic write: commit on success, roll back on any exception. Re-entrant:
        a transaction opened inside another joins it, and only the outermost commits."""
        return _Transaction(self)

    @abstractmethod
    def _begin(self) -> None:
        """Begin a database transaction (the outermost of a nesting)."""

    @abstractmethod
    def _commit(self) -> None:
        """Commit it; on failure the transaction must be over (rolled back) when this raises."""

    @abstractmethod
    def _rollback(self, exc: BaseException) -> BaseException | None:
        """Roll it back because of `exc`; return an exception to raise instead, if any."""

    def committed(self) -> bool:
        """True when no transaction is open (what was written is durable and visible)."""
        return self._depth == 0

    @abstractmethod
    def close(self) -> None:
        """Release connections."""

    @abstractmethod
    def execute(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement (`?` placeholders in every dialect) inside the caller's
        transaction; its rows, or none. Areas' SQL and tests' tampering go through it."""

    # -- trees -----------------------------------------------------------------------
    @abstractmethod
    def insert_tree(self, tree: Tree) -> None: ...

    @abstractmethod
    def get_tree(self, tree_id: str, *, stats: bool = True) -> Tree | None:
        """The tree with its node count and its latest change as updated_at. Those read
        the whole tree: `stats=False` skips them (nodes 0, updated_at as stored) for the
        callers that only need its settings (context assembly, mode checks)."""

    @abstractmethod
    def list_trees(self, archived: bool = False) -> list[Tree]:
        """Active trees (or archived ones), newest first, with node counts."""

    @abstractmethod
    def update_tree(self, tree_id: str, fields: dict[str, Any]) -> None:
        """Set mutable tree fields: title, root, updated_at, archived_at."""

    @abstractmethod
    def tree_ids_with_prefix(self, prefix: str, limit: int) -> list[str]: ...

    # -- content ---------------------------------------------------------------------
    @abstractmethod
    def get_content(self, content_id: str) -> bytes | None:
        """The canonical bytes stored under a content id, or None."""

    # -- nodes -----------------------------------------------------------------------
    @abstractmethod
    def insert_node(self, node: Node, body: bytes, flags: int) -> None:
        """Insert a node with its extra sources and stored selections, and its content
        (`body`, the canonical bytes of `node.content`) unless that content is stored."""

    @abstractmethod
    def anchor(self, node_id: str) -> Anchor | None:
        """The fields a child is built from, without the content (see model.Anchor)."""

    @abstractmethod
    def get_nodes(self, ids: Sequence[str]) -> dict[str, Node]:
        """Nodes by id (missing ids are absent from the result), in one query."""

    @abstractmethod
    def node_ids_with_prefix(self, prefix: str, limit: int) -> list[str]: ...

    @abstractmethod
    def walk(self, node_id: str) -> list[tuple[Any, ...]]:
        """The created-from chain from `node_id` up to the root, head first, in one query."""

    @abstractmethod
    def path_rows(self, ids: Sequence[str]) -> dict[str, tuple[Any, ...]]:
        """Walk-shaped rows for given nodes (used for the versions a ref selects)."""

    @abstractmethod
    def node_selections(self, ids: Sequence[str]) -> dict[str, dict[str, str]]:
        """Stored version selections of the given nodes: node -> {slot: version}."""

    @abstractmethod
    def node_sources(self, ids: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
        """Extra continuation sources of the given nodes: node -> [(source, role)]."""

    @abstractmethod
    def children(self, slot: str) -> list[str]:
        """Nodes created under any version of `slot`, excluding versions of each other."""

    @abstractmethod
    def versions(self, slot: str) -> list[str]:
        """Every node filling `slot` (the original first), by creation."""

    @abstractmethod
    def leaves(self, tree_id: str) -> list[str]:
        """Nodes of the tree whose slot has no children, by creation."""

    @abstractmethod
    def branch_points(self, tree_id: str) -> list[str]:
        """Slots of the tree with two or more children, by creation."""

    @abstractmethod
    def tree_nodes(self, tree_id: str) -> Iterator[Node]:
        """Every node of a tree (with sources and selections), by creation."""

    @abstractmethod
    def chain_rows(self, tree_id: str) -> Iterator[dict[str, Any]]:
        """Raw hashed fields of every node of a tree, for verification: id, parent,
        content_id, body (stored bytes, None if missing), created_at, author, role, kind,
        edited_from, options / provenance (stored JSON text), chain_hash, sources,
        selections. Nothing is parsed, so corrupt rows still reach the verifier."""

    @abstractmethod
    def subtree(self, slot: str) -> list[str]:
        """Every node at or below `slot` (all versions), in one query."""

    # -- edges -----------------------------------------------------------------------
    @abstractmethod
    def insert_edge(self, edge: Edge) -> None: ...

    @abstractmethod
    def edges_of(self, node_id: str) -> list[Edge]:
        """Annotation and link edges touching a node, as source or target."""

    # -- metadata overlay ------------------------------------------------------------
    @abstractmethod
    def get_meta(self, ids: Sequence[str]) -> dict[str, Meta]:
        """Overlay of the given nodes; nodes without one are absent."""

    @abstractmethod
    def set_meta(self, node_id: str, tree_id: str, fields: dict[str, Any]) -> None:
        """Set bookmarked / label / pruned / excluded on a node."""

    @abstractmethod
    def add_tags(self, node_id: str, tree_id: str, tags: Sequence[str]) -> None: ...

    @abstractmethod
    def remove_tags(self, node_id: str, tags: Sequence[str]) -> None: ...

    @abstractmethod
    def flagged(self, tree_id: str, flag: str) -> set[str]:
        """Ids of the tree's nodes with overlay flag `excluded` or `pruned` set."""

    # -- refs ------------------------------------------------------------------------
    @abstractmethod
    def get_ref(self, name: str) -> Ref | None: ...

    @abstractmethod
    def list_refs(self, kind: str | None = None, tree_id: str | None = None) -> list[Ref]: ...

    @abstractmethod
    def ref_names_like(self, name: str, limit: int) -> list[str]:
        """Ref names close to `name` (sharing a prefix), to suggest on a miss."""

    @abstractmethod
    def insert_ref(self, ref: Ref, move: RefMove | None) -> bool:
        """Create a ref if the name is free (False when it exists), logging `move` (its
        creation) as the next line of the name's log. With no move the log must already
        lead to `ref.node`, as when a copy writes the log first; a backend that reads a
        ref's head from its log adds a line when it does not."""

    @abstractmethod
    def move_ref(self, move: RefMove) -> bool:
        """Compare-and-swap: log `move` as line `move.seq` of its ref's log and point the
        ref at `move.new`, only if that line is still free, i.e. nothing changed the
        ref since it was read at `move.seq - 1`. False (nothing written) otherwise."""

    @abstractmethod
    def delete_ref(self, name: str) -> None: ...

    @abstractmethod
    def set_selection(self, name: str, slot: str, version: str | None) -> None:
        """Make ref `name` use `version` for `slot` (None clears the selection)."""

    @abstractmethod
    def log_move(self, move: RefMove) -> None:
        """Append a copied log line as the next line of its ref's log (imports, copies);
        moves go through `move_ref`."""

    @abstractmethod
    def ref_log(self, name: str) -> list[RefMove]:
        """Every recorded move of a ref, oldest first."""

    # -- provenance ------------------------------------------------------------------
    @abstractmethod
    def insert_generation(self, gen: dict[str, Any]) -> None:
        """Store one generation record. Keys: id, tree_id, created_at, provider, model,
        request, provider_request, raw_response (JSON text), response_hash (`sha256:`),
        usage (JSON text or None), latency_ms, status."""

    @abstractmethod
    def get_generation(self, gen_id: str) -> dict[str, Any] | None:
        """A generation record with the same keys (JSON fields as stored text)."""

    @abstractmethod
    def insert_compaction(self, row: dict[str, Any]) -> None:
        """Keys: node_id, tree_id, model, tokens_before, tokens_after, duration_ms,
        trigger, summarized, created_at."""

    @abstractmethod
    def get_compaction(self, node_id: str) -> dict[str, Any] | None: ...

    # -- buffer-mode drafts ----------------------------------------------------------
    @abstractmethod
    def get_draft(self, ref_name: str) -> str | None:
        """The working buffer (draft) of a session or view; None when it has none."""

    @abstractmethod
    def set_draft(self, ref_name: str, text: str, at: str) -> None:
        """Store a ref's draft (updated at `at`); an empty text removes it."""

    # -- blobs -----------------------------------------------------------------------
    @abstractmethod
    def put_blob_meta(self, blob_id: str, size: int, mime_type: str, at: str) -> None: ...

    @abstractmethod
    def get_blob_meta(self, blob_id: str) -> tuple[int, str] | None:
        """(size, mime type) of a blob known to the store."""


class _Transaction:
    """`Backend.transaction()`: a plain context manager (appends open one each, so it is
    kept cheaper than a generator-based one), serialized by the backend's lock."""

    __slots__ = ("backend", "outermost")

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.outermost = False

    def __enter__(self) -> None:
        backend = self.backend
        backend._lock.acquire()
        if backend._depth:
            backend._depth += 1
            return
        try:
            backend._begin()
        except BaseException:
            backend._lock.release()
            raise
        backend._depth = 1
        self.outermost = True

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: object) -> None:
        backend = self.backend
        try:
            if not self.outermost:
                backend._depth -= 1
                return
            backend._depth = 0
            if exc is None:
                backend._commit()
                return
            instead = backend._rollback(exc)
            if instead is not None:
                raise instead from exc
        finally:
            backend._lock.release()
