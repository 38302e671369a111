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

The tree's own lineage names the node a subagent's tree was spawned from, which is
followed when the tree's context is read (docs/security.md, "Stored references"). It
is kept only as an exact id of a node stored in another tree (with the session and
summary it names only when they are that tree's), or of a node a later tree of this
same import brings (`late_lineage` adds it once that tree landed), and never when
following it would come back to the tree; anything else is left out with a warning.
Whom the parent tree belongs to is the front door's check (an HTTP import keeps only
a parent its user sees: `unseen_parent`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
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
    lineages: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    pending_nodes: set[str] = field(default_factory=set)
    pending_links: list[tuple[str, Edge]] = field(default_factory=list)
    pending_lineage: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def settle(self, landed: bool) -> None:
        if landed:
            self.nodes |= self.pending_nodes
            self.waiting += self.pending_links
            self.lineages += self.pending_lineage
        self.pending_nodes = set()
        self.pending_links = []
        self.pending_lineage = []

    def late(self) -> bool:
        """Whether anything waits for the end of the import (`late_links`)."""
        return bool(self.waiting or self.lineages)


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


#: why a spawn lineage is left out: one sentence whatever the reason, so that it never
#: tells whether a node exists elsewhere in the store (another user's)
LEFT_OUT = ("tree.lineage.spawned is left out: a lineage may name only the exact id of a "
            "node this import brings or one of your trees holds, and never lead back")


def lineage(loom: Loom, tid: str, raw: dict[str, Any] | None, run: Run,
            warnings: list[str]) -> dict[str, Any] | None:
    """The lineage a new tree `tid` may store (see the module): `spawned` kept, checked,
    when its node is stored; left for `late_lineage` when it is not (yet)."""
    if raw is None or "spawned" not in raw:
        return raw
    out = {k: v for k, v in raw.items() if k != "spawned"}
    spawned = raw["spawned"]
    node = spawned.get("node") if isinstance(spawned, dict) else None
    if not isinstance(node, str) or not node:
        warnings.append(LEFT_OUT)
    elif (found := storage(loom).anchor(node)) is None:
        run.pending_lineage.append((tid, spawned))
    elif (kept := _spawned(loom, tid, spawned, found.tree)) is None:
        warnings.append(LEFT_OUT)
    else:
        out["spawned"] = kept
    return out or None


def _spawned(loom: Loom, tid: str, spawned: dict[str, Any], tree: str) -> dict[str, Any] | None:
    """The spawn lineage to store for a parent node stored in `tree` (None: none):
    exact ids of that tree only, never one leading back to `tid`; a session or summary
    that is not that tree's is left out of it."""
    if spawned.get("tree", tree) != tree or _reaches(loom, tree, tid):
        return None
    kept: dict[str, Any] = {"tree": tree, "node": spawned["node"]}
    session = spawned.get("session")
    ref = storage(loom).find_ref(session) if isinstance(session, str) else None
    if session is None or (ref is not None and ref.kind == "session" and ref.tree == tree):
        kept["session"] = session
    if "summary" in spawned:
        summary = spawned["summary"]
        at = storage(loom).anchor(summary) if isinstance(summary, str) else None
        if summary is None or (at is not None and at.tree == tree):
            kept["summary"] = summary
    source = spawned.get("source")
    if isinstance(source, dict) and all(isinstance(v, str) for v in source.values()):
        kept["source"] = source
    return kept


#: how many spawn links a loop check follows (spawning nests far less deep)
_LINEAGE_STEPS = 64


def _reaches(loom: Loom, start: str, tree: str) -> bool:
    """Whether the spawn lineage from tree `start` up comes to `tree` (or runs on past
    any real nesting): storing a link to `start` in `tree` would make a loop."""
    at: str | None = start
    for _ in range(_LINEAGE_STEPS):
        if at == tree:
            return True
        found = storage(loom).tree_by_id(at) if at is not None else None
        spawned = (found.lineage or {}).get("spawned") if found is not None else None
        node = spawned.get("node") if isinstance(spawned, dict) else None
        anchor = storage(loom).anchor(node) if isinstance(node, str) else None
        if anchor is None:
            return False
        at = anchor.tree
    return True


def late_lineage(loom: Loom, run: Run) -> Iterator[tuple[str, str]]:
    """Store each waiting spawn lineage whose node a tree of this import brought (in the
    caller's transaction); (where, why) for each one left out."""
    for tid, spawned in run.lineages:
        node = spawned.get("node")
        found = storage(loom).anchor(node) if node in run.nodes else None
        kept = None if found is None else _spawned(loom, tid, spawned, found.tree)
        if kept is None:
            yield f"tree {tid}", LEFT_OUT
            continue
        tree = storage(loom).tree_by_id(tid)
        if tree is not None:
            storage(loom).set_lineage(tid, {**(tree.lineage or {}), "spawned": kept})
    run.lineages = []


def unseen_parent(loom: Loom, tid: str, sees: Callable[[str], bool]) -> str | None:
    """Leave out of new tree `tid`'s lineage a parent tree `sees` refuses (an HTTP
    import's user may name only their own trees, or this import's); the warning, if so."""
    tree = storage(loom).tree_by_id(tid)
    spawned = (tree.lineage or {}).get("spawned") if tree is not None else None
    if tree is None or not isinstance(spawned, dict) or sees(str(spawned.get("tree"))):
        return None
    storage(loom).set_lineage(tid, {k: v for k, v in (tree.lineage or {}).items()
                                    if k != "spawned"} or None)
    return LEFT_OUT


def late_links(loom: Loom, run: Run) -> Iterator[tuple[str, Edge | None, str | None]]:
    """(where, edge to write, None) for each waiting link whose target this import
    brought, else (where, None, why it is left out); waiting spawn lineages are stored
    or left out on the way (`late_lineage`)."""
    for where, why in late_lineage(loom, run):
        yield where, None, why
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
