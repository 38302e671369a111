"""The storage operations the services build on: an internal handle, not the public API.

Generation, buffers, compaction, import, export, forgetting and drawing need a few
things below the everyday calls: a transaction to group writes, a ref moved by
compare-and-swap, drafts, provenance records, node facts by id. They get them from
`storage(loom)`, by name, instead of reaching into `loom.backend` or a private method:
the storage layer can then change shape (connections per thread, areas split) without
touching them. They are not methods of `loomdb.Loom`: what a library user calls is
the front door (`loomdb.Loom` and its area objects), and these bypass its rules (a
transaction, a raw write of a restored row), so only the services reach them. The
edges cannot: the import-linter contract holds them off this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from .model import Anchor, Edge, Meta, Node, Ref, RefMove, Tree, now
from .secrets import Finding, Scanner
from .store import areas

if TYPE_CHECKING:
    from collections.abc import Iterator

    from .headish import Position
    from .store.base import Backend
    from .store.forget import ForgetStore
    from .store.nodes import ChainRow, ClimbRow, PathRow, ShapeRow
    from .store.provenance import Compaction, Generation


class Core(Protocol):
    """What the handle uses of the core `Loom` it belongs to."""

    backend: Backend
    _memory: Any
    _recent: dict[str, Node]
    _anchors: dict[str, Anchor]
    _sessions: dict[str, Ref]

    def _find_tree(self, name: str, *, stats: bool) -> Tree: ...
    def _remember(self, node: Node) -> Node: ...
    def _head_of(self, ref: Ref) -> str: ...
    def _move(self, ref: Ref, new: str | None, reason: str) -> Ref: ...
    def check_values(self, **values: Any) -> None: ...
    def _scanner(self) -> Scanner: ...
    def _forget_scanner(self) -> None: ...
    def _note_findings(self, found: Sequence[Finding], tree: str, item: str) -> None: ...


class Holder(Protocol):
    """A core `Loom`: it makes its handle once, when it opens."""

    _storage: Storage


def storage(loom: Holder) -> Storage:
    """The storage handle of a Loom (the services' way below the front door)."""
    return loom._storage


class Storage:
    """Grouping, lookups by id and records: the seams between services and storage."""

    __slots__ = ("_core", "backend")

    def __init__(self, core: Core) -> None:
        self._core = core
        self.backend = core.backend

    # == grouping ===================================================================
    def transaction(self) -> AbstractContextManager[None]:
        """One unit of work: every write inside commits together or not at all (nested
        calls join the outer one)."""
        return self.backend.transaction()

    def settle(self) -> None:
        """After a bulk write: bring the query planner's statistics up to date
        (`Backend.settle`)."""
        self.backend.settle()

    def committed(self) -> bool:
        """True outside any transaction: what was read or written now is durable."""
        return self.backend.committed()

    def blobs_named(self, blob_ids: Sequence[str]) -> set[str]:
        """Which of these blob ids stored node content names (garbage collection's
        check in its deleting transaction; any mention counts, so it errs on keeping)."""
        return self.backend.blob_meta.blobs_named(blob_ids)

    # == trees, refs and nodes by name or id ========================================
    def node_ids_in_trees(self, prefix: str, trees: Sequence[str], limit: int) -> list[str]:
        """Ids of nodes of `trees` that start with `prefix`, in order, at most `limit`:
        an id prefix resolved within what one user owns (`users.names`)."""
        return self.backend.trees.node_ids_in_trees(prefix, trees, limit)

    def tree_settings(self, name: str) -> Tree:
        """A tree's settings (mode, system, options) without counting its nodes."""
        return self._core._find_tree(name, stats=False)

    def tree_by_id(self, tree_id: str, *, stats: bool = False) -> Tree | None:
        """The tree with exactly this id, or None; `stats` adds its node count and last
        change (they read the whole tree)."""
        return self.backend.trees.get_tree(tree_id, stats=stats)

    def find_ref(self, name: str) -> Ref | None:
        """The ref with exactly this name, or None (`ref` raises NotFound instead)."""
        return self.backend.refs.get_ref(name)

    def head(self, ref: Ref) -> str:
        """The node a ref shows at its head (its selection for the head's slot, if any)."""
        return self._core._head_of(ref)

    def move_ref(self, ref: Ref, to: str | None, reason: str) -> Ref:
        """Move `ref` from where it was read to `to`, logged with `reason`; RefConflict
        when someone moved it since (compare-and-swap on its log)."""
        return self._core._move(ref, to, reason)

    def anchor(self, node_id: str) -> Anchor | None:
        """What a child of the node is built from (tree, slot, depth, chain hash), without
        its content; None when no such node is stored."""
        return self.backend.nodes.anchor(node_id)

    def path_end(self, pos: Position, min_depth: int) -> list[PathRow]:
        """The rows of the path to `pos` from `min_depth` on (root first), its version
        selections applied: the end of a long path without reading the rest of it."""
        from .graph import resolve_path

        return resolve_path(self.backend, pos.node, pos.selections, min_depth)

    def climb(self, tree: str, a: str, b: str, steps: int, source: str) -> list[ClimbRow]:
        """Nodes `a` and `b` of `tree` and up to `steps` ancestors of each, in one
        query (see `NodeStore.climb`)."""
        return self.backend.nodes.climb(tree, (a, b), steps, source)

    def remember(self, node: Node) -> None:
        """Keep a node written inside a transaction of the caller's in this Loom's
        memory of recent nodes, once that transaction has committed (a node of a
        transaction that may still roll back is not a fact yet): a later append or
        read after it then starts without reading it."""
        if self.backend.committed():
            self._core._remember(node)

    def nodes_by_id(self, ids: Sequence[str]) -> dict[str, Node]:
        """The nodes that exist among `ids`, by id (missing ids are left out)."""
        return self.backend.nodes.get_nodes(list(ids))

    def node_sources(self, ids: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
        """The extra sources (context, instruction) of the nodes that have some, by id."""
        return self.backend.nodes.node_sources(list(ids))

    def metas(self, ids: Sequence[str]) -> dict[str, Meta]:
        """The overlay (tags, flags, bookmark) of nodes that have one, by id."""
        return self.backend.meta.get_meta(list(ids))

    def slot_children(self, slot: str) -> list[str]:
        """Nodes continuing any version of `slot`."""
        return self.backend.nodes.children(slot)

    def slot_versions(self, slot: str) -> list[str]:
        """Every version of `slot`, the original first."""
        return self.backend.nodes.versions(slot)

    def children_of(self, slots: Sequence[str], tree_id: str) -> dict[str, list[str]]:
        """`slot_children` of each of a tree's slots (in one query where the backend can)."""
        return self.backend.nodes.children_of(slots, tree_id)

    def versions_of(self, slots: Sequence[str], tree_id: str) -> dict[str, list[str]]:
        """`slot_versions` of each of a tree's slots (in one query where the backend can)."""
        return self.backend.nodes.versions_of(slots, tree_id)

    def subtree(self, slot: str) -> list[str]:
        """Every node under `slot` (itself included), versions too."""
        return self.backend.nodes.subtree(slot)

    def flagged(self, tree: str, flag: str) -> set[str]:
        """Ids of a tree's nodes carrying an overlay flag (`pruned`, `excluded`)."""
        return self.backend.meta.flagged(tree, flag)

    def all_nodes(self, tree_id: str) -> Iterator[Node]:
        """Every node of a tree by exact id, streamed (`tree_nodes` resolves a name)."""
        return self.backend.nodes.tree_nodes(tree_id)

    def tree_shape(self, tree_id: str) -> list[ShapeRow]:
        """Every node of a tree by exact id, as drawing the whole tree needs it: ids,
        parent, slot, role, kind and the head of the stored content (see `ShapeRow`)."""
        return self.backend.nodes.tree_shape(tree_id)

    def chain_rows(self, tree_id: str) -> Iterator[ChainRow]:
        """What verification reads of each node of a tree, as stored (streamed)."""
        return iter(self.backend.nodes.chain_rows(tree_id))

    def blob_known(self, blob_id: str) -> tuple[int, str] | None:
        """(size, mime type) of a stored blob, or None."""
        return self.backend.blob_meta.get_blob_meta(blob_id)

    def ref_moves(self, name: str) -> list[RefMove]:
        """Every logged move of a ref, oldest first ([] for an unknown name)."""
        return self.backend.refs.ref_log(name)

    def node_edges(self, node_id: str) -> list[Edge]:
        """The annotation and link edges touching a node, by exact id."""
        return self.backend.edges.edges_of(node_id)

    # == drafts ======================================================================
    def draft(self, ref_name: str) -> str:
        """The uncommitted text of a session or view ('' when none)."""
        return self.backend.drafts.get_draft(ref_name) or ""

    def write_draft(self, ref_name: str, text: str) -> None:
        """Replace the draft of a session or view (inside the caller's transaction)."""
        self.backend.drafts.set_draft(ref_name, text, now())

    # == records =====================================================================
    def record_generation(self, row: Generation, found: Sequence[Finding] = ()) -> None:
        """Store one model call's provenance (request, raw response, usage, latency),
        its texts under the store's secrets policy (a raw response redacted here, after
        its hash was taken, is noted as redacted: the verifier tells it from tampering)."""
        scan, more = self._core._scanner(), list[Finding]()
        if scan.active:
            row = dict(row)  # type: ignore[assignment]
            for name in ("request", "provider_request", "raw_response"):
                row[name] = scan.json_text(row[name], name, more) or row[name]
        with self.backend.transaction():
            self.backend.provenance.insert_generation(row)
            self._core._note_findings([*found, *more], row["tree_id"], row["id"])
            if any(f.place.startswith("raw_response") and f.action == "redact" for f in more):
                self.backend.forget.mark_redacted([row["id"]], "generation", now())

    def generation(self, gen_id: str) -> Generation | None:
        """A stored generation record by id."""
        return self.backend.provenance.get_generation(gen_id)

    def record_compaction(self, row: Compaction) -> None:
        """Store what a compaction did (model, tokens before and after, duration)."""
        self.backend.provenance.insert_compaction(row)

    def compaction(self, node_id: str) -> Compaction | None:
        """The stored record of a compaction node, or None."""
        return self.backend.provenance.get_compaction(node_id)

    # == restoring a lossless export (inside the caller's transaction) ===============
    def restore_ref(self, ref: Ref, log: Sequence[RefMove], draft: str | None = None) -> None:
        """Write a ref exactly as exported: its log first (a backend may read a ref's head
        from the last line of its log), then the ref, then its draft."""
        for move in log:
            self.backend.refs.log_move(move)
        self.backend.refs.insert_ref(ref, None)
        if draft:
            self.backend.drafts.set_draft(ref.name, draft, ref.created_at)

    def restore_meta(
        self, node_id: str, tree_id: str, fields: dict[str, Any], tags: Sequence[str]
    ) -> None:
        """Write a node's overlay (flags, label, tags) as exported, without logging."""
        self.backend.meta.set_meta(node_id, tree_id, fields)
        if tags:
            self.backend.meta.add_tags(node_id, tree_id, list(tags))

    def restore_edge(self, edge: Edge) -> None:
        """Write an annotation or link edge as exported (its id kept)."""
        self.backend.edges.insert_edge(edge)

    def write_tags(self, node_id: str, tree_id: str, tags: Sequence[str]) -> None:
        """Tag a node inside the caller's transaction, without resolving or logging (for
        importers that write a whole tree at once)."""
        self.backend.meta.add_tags(node_id, tree_id, list(tags))

    def set_lineage(self, tree_id: str, lineage: dict[str, Any] | None) -> None:
        """Replace a tree's lineage (an import keeps only what it checked)."""
        self._core.check_values(**{"tree.lineage": lineage})
        self.backend.trees.update_tree(tree_id, {"lineage": lineage})

    def write_tree(self, tree: Tree) -> None:
        """Write a tree row as given, inside the caller's transaction (for importers
        that write the root node themselves with `write_node`)."""
        self._core.check_values(**{"tree.options": tree.options, "tree.lineage": tree.lineage})
        scan, found = self._core._scanner(), list[Finding]()
        if scan.active:  # an import's title, system prompt and lineage, as content is
            tree = replace(tree, title=scan.value(tree.title, "title", found, "import"),
                           system=scan.value(tree.system, "system", found, "import"),
                           lineage=scan.value(tree.lineage, "lineage", found, "import"))
        self.backend.trees.insert_tree(tree)
        self._core._note_findings(found, tree.id, tree.id)

    # == the secrets scanner (loomdb.secrets, docs/security.md) =======================
    def scanner(self) -> Scanner:
        """The store's secrets policy, compiled, as every write applies it."""
        return self._core._scanner()

    def forget_scanner(self) -> None:
        """Read the secrets policy again on the next write (after it changed)."""
        self._core._forget_scanner()

    def screen(self, value: Any, place: str, source: str | None = None) -> tuple[Any, list[Finding]]:
        """`value` (a text, blocks, fields) under the store's secrets policy, for the
        areas' own writes (documents, collections, drafts): (what to write, findings to
        note once the item has its id). Raises SecretRefused for a refused kind."""
        scan, found = self._core._scanner(), list[Finding]()
        if scan.active:
            value = scan.value(value, place, found, source)
        return value, found

    def note_findings(self, found: Sequence[Finding], tree: str, item: str) -> None:
        """Record the scanner's findings about a node or generation record (inside the
        caller's transaction)."""
        self._core._note_findings(found, tree, item)

    # == forgetting (loomdb.forget) ====================================================
    def forgetting(self) -> ForgetStore:
        """Deletes, redactions and their record on this store (store/forget.py)."""
        return self.backend.forget

    def insert_tombstone(self, node: Node, flags: int) -> None:
        """Store a redacted node as an export carried it (`ForgetStore.insert_tombstone`),
        inside the caller's transaction; the areas' write hooks hear of it as of any
        node the core writes."""
        self.backend.forget.insert_tombstone(node, flags)
        areas.nodes_written(self.backend, (node,))

    def drop_memory(self, node_ids: Sequence[str], refs: Sequence[str] = ()) -> None:
        """Forget what this Loom remembers of deleted or redacted nodes and deleted refs
        (recent nodes, anchors, session heads), so nothing is served from memory."""
        core = self._core
        with core._memory:
            for node_id in node_ids:
                core._recent.pop(node_id, None)
                core._anchors.pop(node_id, None)
            for name in refs:
                core._sessions.pop(name, None)
        self.forgetting().forget_memory(node_ids)
