"""Operations on the mutable overlay, mixed into `Loom`: tags, excluded, pruned, and the
annotation and link edges. None of it is part of a node's hash."""

from __future__ import annotations

from typing import Any

from .errors import CycleError, InvalidInput, check_choice
from .headish import Position
from .model import EDGE_TYPES, Edge, Meta, new_id, now
from .ref_ops import LoomParts


class OverlayOps(LoomParts):
    def tag(self, at: str | Position, *tags: str, remove: bool = False) -> Meta:
        """Add (or with `remove=True` take off) tags on a node."""
        pos = at if isinstance(at, Position) else self.resolve(at)
        for t in tags:
            if not t or not isinstance(t, str) or len(t) > 100:
                raise InvalidInput(f"tag {t!r}", "tags are 1-100 characters")
        with self.backend.transaction():
            if remove:
                self.backend.meta.remove_tags(pos.node, tags)
            else:
                self.backend.meta.add_tags(pos.node, pos.tree, tags)
        return self.meta(pos)

    def exclude(self, at: str | Position, on: bool = True) -> Meta:
        """Keep a node out of (or back in) every context built through it."""
        return self._flag(at, "excluded", on)

    def prune(self, at: str | Position, on: bool = True) -> Meta:
        """Soft-delete a branch: its nodes stay, but leaves and drawings skip it."""
        return self._flag(at, "pruned", on)

    def _flag(self, at: str | Position, flag: str, on: bool) -> Meta:
        pos = at if isinstance(at, Position) else self.resolve(at)
        with self.backend.transaction():
            self.backend.meta.set_meta(pos.node, pos.tree, {flag: int(on)})
        return self.meta(pos)

    def meta(self, at: str | Position) -> Meta:
        """A node's overlay: tags, flags and bookmark."""
        pos = at if isinstance(at, Position) else self.resolve(at)
        return self.backend.meta.get_meta([pos.node]).get(pos.node, Meta())

    def link(self, src: str | Position, dst: str | Position, *, type: str = "link") -> Edge:
        """An annotation (same tree, never in context) or a link (may cross trees)."""
        check_choice("edge type", type, EDGE_TYPES[1:])
        a = src if isinstance(src, Position) else self.resolve(src)
        b = dst if isinstance(dst, Position) else self.resolve(dst)
        if a.node == b.node:
            raise CycleError(f"edge {a.node} -> {b.node}", "an edge cannot join a node to itself")
        if type == "annotation":
            if a.tree != b.tree:
                raise InvalidInput(f"edge {a.node} -> {b.node}",
                                   "annotations stay in one tree; use --type link")
            if b.node in self.path(a):
                raise CycleError(f"edge {a.node} -> {b.node}",
                                 "the target is an ancestor of the source: that closes a cycle")
        edge = Edge(new_id(), a.tree, type, ((a.node, "primary"),), b.node, now())
        with self.backend.transaction():
            self.backend.edges.insert_edge(edge)
        return edge

    def edges(self, at: str | Position) -> list[Edge]:
        """The annotation and link edges touching a node."""
        pos = at if isinstance(at, Position) else self.resolve(at)
        return self.backend.edges.edges_of(pos.node)

    def edge_map(self, at: str | Position) -> dict[str, Any]:
        """Every edge of a node by direction and type: `{"node", "incoming": {type:
        [{"node", "edge"?}]}, "outgoing": {...}}`. Continuations count as edges of type
        `continuation` (the parent and extra sources in, the children out), with the
        annotation and link edges (and any other type) beside them."""
        pos = at if isinstance(at, Position) else self.resolve(at)
        node = self._get(pos.node)
        incoming: dict[str, list[dict[str, str]]] = {}
        outgoing: dict[str, list[dict[str, str]]] = {}
        if node.parent is not None:
            incoming["continuation"] = [{"node": node.parent}]
            incoming["continuation"] += [{"node": src} for src, _ in node.sources]
        kids = self.backend.nodes.children(node.slot)
        if kids:
            outgoing["continuation"] = [{"node": k} for k in kids]
        for edge in self.backend.edges.edges_of(node.id):
            if edge.target == node.id:
                incoming.setdefault(edge.type, []).extend(
                    {"node": src, "edge": edge.id} for src, _ in edge.sources)
            if any(src == node.id for src, _ in edge.sources):
                outgoing.setdefault(edge.type, []).append({"node": edge.target, "edge": edge.id})
        return {"node": node.id, "incoming": incoming, "outgoing": outgoing}

