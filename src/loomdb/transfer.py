"""Copy a whole store from one Loom to another (`loomdb migrate --from ... --to ...`).

Everything is carried over unchanged: trees, nodes with their ids, chain hashes and
stored content bytes, hyperedge sources and stored selections, the metadata overlay
and tags, annotation and link edges, refs with their selections and their whole log
(deleted refs included), buffer-mode drafts, generations and compaction records, and
the blobs with their metadata. Nothing is re-hashed or re-numbered except ref-log sequence numbers, which
the target assigns in the source's order.

The database part is one transaction on the target, and the target's hash chain is
verified inside it before it commits: a copy that does not verify leaves the target
as it was (blobs, written first because a blob store has no transactions, may stay;
they are content-addressed, so a later copy reuses them). A target that already holds
trees or refs is refused unless `force=True`; then rows already there are kept when
they are the same (same node id and chain hash, same ref position) and anything that
disagrees is an error.

Most of the copy goes through the storage interface. Five things the interface cannot
enumerate (every edge, every blob's metadata, every generation, every draft, the names
of deleted refs that still have a log) are read with plain SQL that both backends
answer alike.

The areas beside the core (documents, collections, references, users, agents, the
gateway's memo...) come along in the same transaction, after the core has verified:
every area the source records is copied row by row by `store.areacopy`, which knows
no area by name (a new area needs nothing here). The same rules hold: a target row
that is equal is kept, one that differs is an error, and a failure anywhere leaves the
target as it was (the areas' tables included). An area derived from the others, the
search index, is not copied but rebuilt at the target by the hook its Area names
(so everything copied is searchable when the copy commits); semantic vectors are
embedded again on the target's next semantic query.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import IntegrityError, InvalidInput
from .model import Edge, Node, Tree
from .store import areacopy, areas
from .store.base import HAS_SELECTIONS, HAS_SOURCES, Backend
from .store.nodes import TOMBSTONE

if TYPE_CHECKING:
    from .loom import Loom

_BATCH = 1000


@dataclass
class CopyReport:
    """What a copy wrote (counts) and what it verified at the target."""

    trees: int = 0
    nodes: int = 0
    contents: int = 0
    edges: int = 0
    refs: int = 0
    moves: int = 0
    tags: int = 0
    overlays: int = 0
    generations: int = 0
    compactions: int = 0
    drafts: int = 0
    blobs: int = 0
    verified: int = 0
    kept: dict[str, int] = field(default_factory=dict)  # rows already in the target (force)
    #: rows written per area and table ({"documents": {"doc_revisions": 3, ...}})
    areas: dict[str, dict[str, int]] = field(default_factory=dict)
    #: derived areas rebuilt at the target, with what their hook wrote
    rebuilt: dict[str, dict[str, int]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def copy_store(src: Loom, dst: Loom, *, force: bool = False) -> CopyReport:
    """Copy every tree, ref, log, edge, overlay, blob and area row of `src` into `dst`
    and rebuild its search index; verify the hash chain at `dst` before committing.
    Refuses a `dst` holding trees or refs unless `force`."""
    if src.backend is dst.backend or src.backend.url == dst.backend.url:
        raise InvalidInput("migrate", "the source and the target are the same store")
    if not force:
        _require_empty(dst.backend)
    found = areas.recorded(src.backend)  # an area not known here is refused before any write
    report = CopyReport()
    _copy_blobs(src, dst, report)
    trees = src.backend.trees.list_trees(archived=False) + src.backend.trees.list_trees(archived=True)
    trees.sort(key=lambda t: (t.created_at, t.id))
    with dst.backend.transaction():
        for tree in trees:
            _copy_tree(src.backend, dst.backend, tree, report)
        _copy_edges(src.backend, dst.backend, report)
        _copy_refs(src.backend, dst.backend, report)
        # the record of forgetting: redacted contents verify as redactions there too
        dst.backend.forget.restore_record(src.backend.forget.record_rows())
        for tree in trees:
            result = dst.verify(tree.id)
            if not result.ok:
                first = result.broken[0]
                raise IntegrityError(
                    f"tree {tree.id} after copying",
                    "an intact hash chain",
                    f"{len(result.broken)} broken nodes, first {first['node']}: "
                    f"{first['reason']} (run `loomdb verify` on the source)",
                )
            report.verified += result.checked
        _copy_areas(src, dst, found, report)
    dst.backend.settle()
    return report


# -- the parts ------------------------------------------------------------------------
def _require_empty(backend: Backend) -> None:
    trees = len(backend.trees.list_trees(archived=False)) + len(backend.trees.list_trees(archived=True))
    refs = len(backend.refs.list_refs())
    if trees or refs:
        raise InvalidInput(
            "migrate target",
            f"is not empty ({trees} trees, {refs} refs); copy into an empty store, "
            "or pass force (--force) to add to it",
        )


def _copy_blobs(src: Loom, dst: Loom, report: CopyReport) -> None:
    for raw_id, size, mime, created in _rows(
        src.backend, "SELECT id, size, mime_type, created_at FROM blobs ORDER BY id"
    ):
        bid = "sha256:" + bytes(raw_id).hex()
        if dst.backend.blob_meta.get_blob_meta(bid) is not None and dst.blobs.has(bid):
            _kept(report, "blobs")
            continue
        data = src.blobs.get(bid)  # verified against its id on the way out
        if dst.blobs.put(data) != bid:
            raise IntegrityError(f"blob {bid}", bid, "a different id at the target")
        with dst.backend.transaction():
            dst.backend.blob_meta.put_blob_meta(bid, size, mime, created)
        report.blobs += 1


def _copy_tree(src: Backend, dst: Backend, tree: Tree, report: CopyReport) -> None:
    if dst.trees.get_tree(tree.id, stats=False) is None:
        dst.trees.insert_tree(tree)
        report.trees += 1
    else:
        _kept(report, "trees")
    seen_content: set[str] = set()
    for batch in _batches(_parents_first(src.nodes.tree_nodes(tree.id)), _BATCH):
        there = dst.nodes.get_nodes([n.id for n in batch])
        copies = src.forget.redacted("node", [n.id for n in batch])  # owners' redactions
        new: list[Node] = []
        bodies: dict[str, bytes | None] = {}
        for node in batch:
            if node.id in there:
                if there[node.id].chain_hash != node.chain_hash:
                    raise IntegrityError(f"node {node.id} in the target", node.chain_hash,
                                         there[node.id].chain_hash)
                _kept(report, "nodes")
                continue
            flags = (HAS_SELECTIONS if node.selections else 0) | (
                HAS_SOURCES if node.sources else 0)
            body = TOMBSTONE.encode("utf-8") if node.id in copies else bodies.get(node.content_id)
            if body is None:
                body = bodies[node.content_id] = src.nodes.get_content(node.content_id)
                if body is None:
                    raise IntegrityError(f"content of node {node.id}", node.content_id,
                                         "nothing (missing in the source)")
                if node.content_id not in seen_content:
                    seen_content.add(node.content_id)
                    report.contents += 1
            dst.nodes.insert_node(node, body, flags)
            if node.id in copies:  # a copy its owner redacted: one there too
                dst.forget.redact_copies([node.id])
            new.append(node)
            report.nodes += 1
            if node.kind == "compaction":
                row = src.provenance.get_compaction(node.id)
                if row is not None and dst.provenance.get_compaction(node.id) is None:
                    dst.provenance.insert_compaction(row)
                    report.compactions += 1
        areas.nodes_written(dst, new)  # in the copy's transaction, as the core's writes
        _copy_overlay(src, dst, new, report)
    for (gen_id,) in _rows(src, "SELECT id FROM generations WHERE tree_id = ? ORDER BY id",
                           (tree.id,)):
        gen = src.provenance.get_generation(gen_id)
        if gen is not None and dst.provenance.get_generation(gen_id) is None:
            dst.provenance.insert_generation(gen)
            report.generations += 1


def _copy_overlay(src: Backend, dst: Backend, batch: list[Node], report: CopyReport) -> None:
    metas = src.meta.get_meta([n.id for n in batch])
    for node in batch:
        meta = metas.get(node.id)
        if meta is None:
            continue
        fields: dict[str, Any] = {}
        if meta.bookmarked:
            fields["bookmarked"] = 1
        if meta.label is not None:
            fields["label"] = meta.label
        if meta.pruned:
            fields["pruned"] = 1
        if meta.excluded:
            fields["excluded"] = 1
        if fields:
            dst.meta.set_meta(node.id, node.tree, fields)
            report.overlays += 1
        if meta.tags:
            dst.meta.add_tags(node.id, node.tree, meta.tags)
            report.tags += len(meta.tags)


def _copy_edges(src: Backend, dst: Backend, report: CopyReport) -> None:
    sources: dict[str, list[tuple[str, str]]] = {}
    for edge_id, source, role in _rows(
        src, "SELECT edge_id, source_id, role FROM edge_sources ORDER BY edge_id, position"
    ):
        sources.setdefault(edge_id, []).append((source, role))
    for eid, tree, etype, target, created in _rows(
        src, "SELECT id, tree_id, type, target_id, created_at FROM edges ORDER BY id"
    ):
        edge = Edge(eid, tree, etype, tuple(sources.get(eid, ())), target, created)
        if any(e.id == eid for e in dst.edges.edges_of(target)):
            _kept(report, "edges")
            continue
        dst.edges.insert_edge(edge)
        report.edges += 1


def _copy_refs(src: Backend, dst: Backend, report: CopyReport) -> None:
    live = src.refs.list_refs()
    names = {ref.name for ref in live}
    present = {name for name in names if dst.refs.get_ref(name) is not None}
    # logs before refs: a backend may read a ref's head from the last line of its log
    for (name,) in _rows(src, "SELECT DISTINCT ref_name FROM ref_log ORDER BY ref_name"):
        if name in present or (name not in names and dst.refs.ref_log(name)):
            _kept(report, "ref logs")  # the target has its own history for this name
            continue
        for move in src.refs.ref_log(name):
            dst.refs.log_move(move)
            report.moves += 1
    for ref in live:
        if ref.name not in present and dst.refs.insert_ref(ref, None):
            report.refs += 1
            continue
        there = dst.refs.get_ref(ref.name)
        if there is None or (there.tree, there.node, there.selections) != (
            ref.tree, ref.node, ref.selections
        ):
            raise InvalidInput(
                f"ref {ref.name!r}",
                f"exists in the target at {there.node if there else '?'}, "
                f"not at {ref.node} as in the source",
            )
        _kept(report, "refs")
    drafts = _rows(src, "SELECT ref_name, text, updated_at FROM drafts")
    if drafts and not hasattr(dst, "set_draft"):
        raise InvalidInput("migrate target", "this backend cannot store buffer-mode drafts")
    for name, text, at in drafts:
        if dst.drafts.get_draft(name):
            _kept(report, "drafts")
        else:  # buffer mode's working text of a ref
            dst.drafts.set_draft(name, text, at)
            report.drafts += 1


def _copy_areas(src: Loom, dst: Loom, found: list[areas.Area], report: CopyReport) -> None:
    """The areas the source records (`found`), in the copy's transaction: their rows,
    or, for a derived area, its rebuild hook (run when either side has the area, so
    that rows copied into a target that already indexes them are indexed too)."""
    for area in found:
        if area.derived:
            continue
        copied = areacopy.copy_area(src.backend, dst.backend, area)
        report.areas[area.name] = {table: c.written for table, c in copied.items()}
        for table, c in copied.items():
            if c.kept:
                report.kept[f"{area.name}.{table}"] = c.kept
    there = areas.recorded(dst.backend, known_only=True)
    derived = {a.name: a for a in found + there if a.derived}
    for name, area in sorted(derived.items()):
        hook = area.rebuild_hook()
        if hook is not None:
            report.rebuilt[name] = hook(dst)


# -- helpers --------------------------------------------------------------------------
def _rows(backend: Backend, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Plain SQL the interface has no method for (both backends share these tables)."""
    execute = getattr(backend, "execute", None)
    if execute is None:
        raise InvalidInput("migrate", f"the {type(backend).__name__} cannot be copied from")
    return list(execute(sql, args))


def _parents_first(nodes: Iterable[Node]) -> Iterator[Node]:
    """Nodes in creation order, except that a node never comes before its parent."""
    waiting: dict[str, list[Node]] = {}
    done: set[str] = set()
    for node in nodes:
        if node.parent is not None and node.parent not in done:
            waiting.setdefault(node.parent, []).append(node)
            continue
        stack = [node]
        while stack:
            cur = stack.pop()
            done.add(cur.id)
            yield cur
            stack.extend(reversed(waiting.pop(cur.id, [])))
    if waiting:
        orphan = next(iter(waiting.values()))[0]
        raise IntegrityError(f"node {orphan.id} in the source", f"its parent {orphan.parent}",
                             "no such node")


def _batches(items: Iterable[Node], size: int) -> Iterator[list[Node]]:
    batch: list[Node] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _kept(report: CopyReport, what: str) -> None:
    report.kept[what] = report.kept.get(what, 0) + 1
