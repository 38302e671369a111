"""What a tree document of loomdb's own export may name: its own nodes, and no others.

An import writes what a file says, and a file can say anything: a `parent`, a source,
a selection, an edge or a provenance record naming a node of somebody else's tree
would join that tree to the importer's (their messages read into the importer's
context, the importer's nodes shown as versions and replies in theirs). So every node
a tree document names is a node of that tree (`native` checks the links of nodes and
refs; this module the edges and provenance records). One exception keeps a whole-store
export whole: a `link` edge may end in another tree this same import brings, which may
come later in the file; such links wait in the `Run` and are written at the end
(`late_links`), and a link to any other node is left out with a warning.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..model import EDGE_TYPES, Edge, Node
from ..storage_ops import storage
from . import tombstones as T
from .model import expect

if TYPE_CHECKING:
    from ..loom import Loom


@dataclass
class Run:
    """What one import has brought so far: the trees met, the nodes of the trees that
    landed (link edges may end there), and the link edges waiting for a later tree.
    `import_tree` notes a tree's part as pending; `settle` keeps it once the tree's
    transaction committed, or drops it when it rolled back."""

    trees: set[str] = field(default_factory=set)
    nodes: set[str] = field(default_factory=set)
    waiting: list[tuple[str, Edge]] = field(default_factory=list)
    pending_nodes: set[str] = field(default_factory=set)
    pending_links: list[tuple[str, Edge]] = field(default_factory=list)

    def settle(self, landed: bool) -> None:
        if landed:
            self.nodes |= self.pending_nodes
            self.waiting += self.pending_links
        self.pending_nodes = set()
        self.pending_links = []


def edges(loom: Loom, tid: str, edges: list[Any], nodes: dict[str, Node], run: Run) -> None:
    """Annotation and link edges; their sources, and an annotation's target, are nodes
    of this tree; a link's target may be in a tree this import brings (see `Run`)."""
    for i, raw in enumerate(edges):
        where = f"edges[{i}]"
        rec = expect(raw, dict, where, optional=False)
        eid = _str(rec.get("id"), f"{where}.id")
        etype = rec.get("type")
        if etype not in EDGE_TYPES[1:]:
            raise InvalidInput(f"{where}.type", f"{etype!r} is not annotation or link")
        sources = tuple(
            (_str(s.get("node"), f"{where}.sources.node"), _str(s.get("role"), f"{where}.sources.role"))
            for s in (expect(rec.get("sources"), list, f"{where}.sources") or [])
            if isinstance(s, dict)
        )
        if not sources:
            raise InvalidInput(f"{where}.sources", "an edge needs a source")
        target = _str(rec.get("target"), f"{where}.target")
        for node in (*(s for s, _ in sources), *(() if etype == "link" else (target,))):
            if node not in nodes:
                raise InvalidInput(where, f"names {node}, not a node of this tree")
        if any(e.id == eid for e in storage(loom).node_edges(sources[0][0])):
            continue
        edge = Edge(eid, tid, etype, sources, target,
                    _str(rec.get("created_at"), f"{where}.created_at"))
        if target not in nodes and target not in run.nodes:
            if storage(loom).nodes_by_id([target]):
                raise InvalidInput(where, f"links to {target}, which is neither a node of "
                                   "this tree nor one this import brought")
            run.pending_links.append((f"tree {tid} {where}", edge))
            continue
        storage(loom).restore_edge(edge)


def check_records(loom: Loom, tid: str, generations: list[Any], compactions: list[Any],
             nodes: dict[str, Node]) -> None:
    """Provenance records of this tree (a compaction's, of one of its nodes)."""
    for i, raw in enumerate(generations):
        rec = expect(raw, dict, f"generations[{i}]", optional=False)
        if rec.get("tree_id") != tid:
            raise InvalidInput(f"generations[{i}].tree_id", "is not this tree")
        if storage(loom).generation(_str(rec.get("id"), f"generations[{i}].id")) is None:
            T.record_generation(loom, rec)  # a redacted one stays noted so
    for i, raw in enumerate(compactions):
        rec = expect(raw, dict, f"compactions[{i}]", optional=False)
        node = _str(rec.get("node_id"), f"compactions[{i}].node_id")
        if rec.get("tree_id") != tid or node not in nodes:
            raise InvalidInput(f"compactions[{i}]", f"names {node}, not a node of this tree")
        if storage(loom).compaction(node) is None:
            storage(loom).record_compaction(rec)


def late_links(loom: Loom, run: Run) -> Iterator[tuple[str, Edge | None, str | None]]:
    """(where, edge to write, None) for each waiting link whose target this import
    brought, else (where, None, why it is left out)."""
    for where, edge in run.waiting:
        if edge.target in run.nodes:
            if not any(e.id == edge.id for e in storage(loom).node_edges(edge.sources[0][0])):
                yield where, edge, None
        else:
            yield where, None, (f"a link to {edge.target}, which is not a node this import "
                                "brought; left out")
    run.waiting = []


def _str(value: Any, where: str) -> str:
    value = expect(value, str, where, optional=False)
    if not value:
        raise InvalidInput(where, "must not be empty")
    return value  # type: ignore[no-any-return]
