"""`Loom`: the core store of conversations. Every operation is one transaction.

The Loom owns the rules the backends do not: validating content, computing chain
hashes, choosing versions along a path, resolving headish names, moving refs by
compare-and-swap and logging them. This module holds the store's opening, its
memories of committed facts, trees and reads; writing is `write_ops.WriteOps`, refs
`ref_ops.RefOps`, the overlay `overlay.OverlayOps` (mixed in), and what services use
below the front door `storage_ops.storage(loom)`. It reads no environment and prints nothing; the
CLI and HTTP layers translate its typed errors at the edge.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from . import content as C
from .blobs import BlobStore
from .context import assemble
from .context import context_rows as _context_rows
from .errors import InvalidInput, NotFound
from .graph import resolve_path
from .headish import BaseResolver, Position, parse, resolve_base
from .limits import DEFAULT as DEFAULT_LIMITS
from .limits import Limits
from .model import Anchor, Node, Ref, Tree, now
from .overlay import OverlayOps
from .ref_ops import RefOps
from .settings import NONE as NO_SETTINGS
from .settings import Settings
from .storage_ops import Storage
from .store import areas
from .store.areas import Area, Unit
from .store.base import ID, Backend
from .write_ops import _FULL_ID, ContentLike, WriteOps

if TYPE_CHECKING:
    from .verify import Report

__all__ = ["ContentLike", "Loom"]

_CONTENT_ID = re.compile(r"sha256:[0-9a-f]{64}")


class Loom(WriteOps, RefOps, OverlayOps):
    """A store of branching conversations: see the package docstring for the model."""

    def __init__(
        self,
        backend: Backend,
        blobs: BlobStore,
        *,
        actor: str = "human",
        max_content_bytes: int = C.DEFAULT_MAX_CONTENT_BYTES,
        limits: Limits = DEFAULT_LIMITS,
        settings: Settings = NO_SETTINGS,
    ) -> None:
        self.backend = backend
        #: what the edge that opened this store read from its environment (loomdb.settings)
        self.settings = settings
        #: what an untrusted caller may send (sizes, depths, counts): see loomdb.limits
        self.limits = limits
        self.blobs = blobs
        self.actor = actor
        self.max_content_bytes = max_content_bytes
        # nodes this Loom wrote and committed: immutable, so a cache is always right;
        # appending through a session reads its head, which is usually the last write
        self._recent: dict[str, Node] = {}
        # sessions as this Loom last moved them: an append through one starts from here
        # without reading it, and its compare-and-swap (line seq + 1 of the ref's log)
        # catches any change made since, by anyone; then it reads and tries again
        self._sessions: dict[str, Ref] = {}
        # what a child is built from, for many more nodes than `_recent` keeps whole:
        # appending after any of them by id reads nothing before its transaction
        self._anchors: dict[str, Anchor] = {}
        # one Loom serves many threads: they read these memories freely (a dict read is
        # atomic) and change them under this lock; only committed facts enter them
        self._memory = threading.Lock()
        # the services' handle below the front door (`loomdb.storage_ops.storage`)
        self._storage = Storage(self)

    def _remember(self, node: Node) -> Node:
        anchor = Anchor(node.id, node.tree, node.slot, node.depth, node.total_tokens,
                        node.chain_hash)
        with self._memory:
            if len(self._recent) >= 1024 and node.id not in self._recent:
                self._recent.pop(next(iter(self._recent)))
            self._recent[node.id] = node
            self._keep_anchor(anchor)
        return node

    def _remember_anchor(self, anchor: Anchor) -> Anchor:
        """Remember what a child of a node is built from, once it is committed (an
        anchor read inside a transaction may belong to a node that rolls back)."""
        if self.backend.committed():
            with self._memory:
                self._keep_anchor(anchor)
        return anchor

    def _keep_anchor(self, anchor: Anchor) -> None:
        if len(self._anchors) >= 16384 and anchor.id not in self._anchors:
            self._anchors.pop(next(iter(self._anchors)))
        self._anchors[anchor.id] = anchor

    @classmethod
    def open(cls, db: str | Path | None = None, *, settings: Settings = NO_SETTINGS,
             **options: Any) -> Self:
        """Open (creating and migrating if needed) the store at a folder or URL (None:
        the settings' store, `./.loomdb` without any)."""
        from .store import open_store

        backend, blobs = open_store(db, settings)
        try:
            backend.migrate()
        except BaseException:
            backend.close()  # a refused open leaves no connection behind
            raise
        return cls(backend, blobs, settings=settings, **options)

    def close(self) -> None:
        """Release the store's connections."""
        self.backend.close()

    def unit(self, area: Area) -> AbstractContextManager[Unit]:
        """One transaction over an area's tables (see `loomdb.store.areas`); it joins an
        enclosing unit or core write, so both commit or roll back together."""
        return areas.unit(self.backend, area)

    def has_area(self, area: Area) -> bool:
        """Whether this store has `area` (its migrations recorded): lets a caller use an
        area only where it exists, without creating its tables."""
        return areas.applied(self.backend, area)

    def recorded_areas(self) -> list[Area]:
        """The areas this store records and this process knows (`store.areas.recorded`):
        whom `loomdb.hooks` asks."""
        return areas.recorded(self.backend, known_only=True)

    def content_body(self, content_id: str) -> list[dict[str, Any]] | None:
        """The blocks stored under a content id (by any node), or None when none holds it."""
        if not isinstance(content_id, str) or not _CONTENT_ID.fullmatch(content_id):
            raise InvalidInput("content id", f"{content_id!r} is not sha256:<64 hex digits>")
        body = self.backend.nodes.get_content(content_id)
        return None if body is None else json.loads(body)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # == trees ======================================================================
    def tree(self, name: str) -> Tree:
        """A tree by id, unique id prefix, or any headish inside it."""
        return self._find_tree(name, stats=True)

    def _find_tree(self, name: str, *, stats: bool) -> Tree:
        """`tree`, optionally without the node count and last change: those read the
        whole tree (see Backend.get_tree), which mode checks and context do not need."""
        tree = self.backend.trees.get_tree(name, stats=stats)
        if tree is None:
            from .errors import AmbiguousName

            found = (self.backend.trees.tree_ids_with_prefix(name.upper(), AmbiguousName.LOOKUP)
                     if len(name) >= 6 else [])
            if len(found) == 1:
                tree = self.backend.trees.get_tree(found[0], stats=stats)
            elif not found:
                tree = self.backend.trees.get_tree(self.resolve(name).tree, stats=stats)
            else:
                raise AmbiguousName("tree", name, found)
        assert tree is not None
        return tree

    def trees(self, archived: bool = False) -> list[Tree]:
        """All trees (or the archived ones), newest first, with node counts."""
        return self.backend.trees.list_trees(archived)

    def archive(self, name: str, on: bool = True) -> Tree:
        """Archive a tree (soft-delete: hidden from `trees`), or bring it back with `on=False`."""
        tree = self.tree(name)
        with self.backend.transaction():
            self.backend.trees.update_tree(tree.id, {"archived_at": now() if on else None})
        return self.tree(tree.id)

    def rename(self, name: str, title: str) -> Tree:
        """Give a tree a new title."""
        tree = self.tree(name)
        if not title.strip():
            raise InvalidInput("title", "must not be empty")
        C.check_text(title, "title")
        with self.backend.transaction():
            self.backend.trees.update_tree(tree.id, {"title": title, "updated_at": now()})
        return self.tree(tree.id)

    # == reading ====================================================================
    def resolve(self, headish: str, *, names: BaseResolver | None = None) -> Position:
        """A headish -> the node it names, its tree and the ref whose selections apply.

        `names` resolves the base name (before `~N` / `^`) in place of the whole store's
        refs and ids: a caller who may see only part of the store passes its own, so a
        name is resolved once, against what that caller sees."""
        return self._resolve(headish, names)[0]

    def _resolve(self, headish: str,
                 names: BaseResolver | None = None) -> tuple[Position, Node]:
        base, up = parse(headish)
        if names is None and up == 0 and _FULL_ID.fullmatch(base) and (
                hit := self._recent.get(base)) is not None:
            return Position(hit.id, hit.tree, None, None, {}), hit  # never a ref name
        node_id, ref = resolve_base(self.backend, base) if names is None else names(base)
        selections = dict(ref.selections) if ref and ref.kind != "bookmark" else {}
        session = ref.name if ref and ref.kind == "session" and up == 0 else None
        if up == 0 and not selections:
            node = self._get(node_id)
            return Position(node.id, node.tree, ref, session, selections), node
        rows = resolve_path(self.backend, node_id, selections)
        if up >= len(rows):
            raise InvalidInput(
                f"headish {headish!r}", f"goes {up} up but the path holds {len(rows)} nodes"
            )
        node = self._get(rows[len(rows) - 1 - up][ID])
        return Position(node.id, node.tree, ref, session, selections), node

    def node(self, at: str | Position) -> Node:
        """The node a headish names."""
        pos = at if isinstance(at, Position) else self.resolve(at)
        return self._get(pos.node)

    def nodes(self, ids: Iterable[str]) -> list[Node]:
        """The nodes with these ids that exist, in the order given."""
        ids = list(ids)
        found = self.backend.nodes.get_nodes(ids)
        return [found[i] for i in ids if i in found]

    def _get(self, node_id: str) -> Node:
        hit = self._recent.get(node_id)
        if hit is not None:
            return hit
        found = self.backend.nodes.get_nodes([node_id])
        if node_id not in found:
            raise NotFound("node", node_id)
        return found[node_id]

    def path_rows(self, at: str | Position) -> list[tuple[Any, ...]]:
        """Walk-shaped rows from the root to `at` (see store.base.PATH_COLUMNS)."""
        pos = at if isinstance(at, Position) else self.resolve(at)
        return resolve_path(self.backend, pos.node, pos.selections)

    def path(self, at: str | Position) -> list[str]:
        """Node ids from the root to `at`, one version per slot."""
        return [r[ID] for r in self.path_rows(at)]

    def children(self, at: str | Position) -> list[str]:
        """The continuations of a node (of any of its versions)."""
        return self.backend.nodes.children(self.node(at).slot)

    def siblings(self, at: str | Position) -> list[str]:
        """The other alternatives under the same parent slot (not versions of this one)."""
        node = self.node(at)
        if node.parent is None:
            return []
        parent_slot = self._get(node.parent).slot
        return [c for c in self.backend.nodes.children(parent_slot) if c != node.slot]

    def versions(self, at: str | Position) -> list[str]:
        """Every version of a node's slot, the original first."""
        return self.backend.nodes.versions(self.node(at).slot)

    def leaves(self, tree: str, *, include_pruned: bool = False) -> list[str]:
        """Nodes of a tree nothing continues from (pruned branches hidden unless asked)."""
        tid = self._find_tree(tree, stats=False).id
        leaves = self.backend.nodes.leaves(tid)
        pruned = set() if include_pruned else self.backend.meta.flagged(tid, "pruned")
        if not pruned:
            return leaves
        hidden: set[str] = set()
        for node in self.nodes(pruned):
            hidden.update(self.backend.nodes.subtree(node.slot))
        return [leaf for leaf in leaves if leaf not in hidden]

    def branch_points(self, tree: str) -> list[str]:
        """Nodes of a tree with two or more continuations."""
        return self.backend.nodes.branch_points(self._find_tree(tree, stats=False).id)

    def tree_nodes(self, tree: str) -> list[Node]:
        """Every node of a tree, versions included."""
        return list(self.backend.nodes.tree_nodes(self._find_tree(tree, stats=False).id))

    def context(self, at: str | Position, options: dict[str, Any] | None = None) -> dict[str, Any]:
        """The normalized context window at `at`: `{"messages": [...], "options": {...}}`."""
        pos = at if isinstance(at, Position) else self.resolve(at)
        pieces: list[bool] = []
        ctx = assemble(self.backend, pos.tree, self.path_rows(pos), options or {}, pieces)
        if pieces or areas.PIECE_OPTION in ctx["options"]:
            return areas.block_hooks("piece").expand_context(self, pos.tree, ctx)
        return ctx

    def context_rows(self, at: str | Position) -> list[tuple[Any, ...]]:
        """The path rows whose messages enter the context at `at`, in order (the latest
        compaction honoured, excluded nodes left out; see store.base.PATH_COLUMNS)."""
        pos = at if isinstance(at, Position) else self.resolve(at)
        return _context_rows(self.backend, pos.tree, self.path_rows(pos))

    def backup(self, dest: str | Path) -> Any:
        """A consistent online copy of this SQLite store at `dest`; see `loomdb.backup`."""
        from .backup import backup  # (loaded by the one command that copies)

        return backup(self, dest)

    def verify(self, tree: str | None = None) -> Report:
        """Check the hash chain and what it claims (raw responses, blob bytes) of one
        tree (default: every tree, archived ones too); see `loomdb.verify.verify`."""
        from .verify import verify  # (a check, not on any write's path)

        return verify(self, self._find_tree(tree, stats=False).id if tree else None)
