"""SQLite's annotation and link edges (their sources in `edge_sources`)."""

from __future__ import annotations

from typing import Any

from ...model import Edge
from ..nodes import EdgeStore
from .connections import Connections


class SQLiteEdges(EdgeStore):
    """`EdgeStore` on SQLite."""

    def __init__(self, connections: Connections) -> None:
        self.c = connections

    def insert_edge(self, edge: Edge) -> None:
        self.c.db.execute(
            "INSERT INTO edges VALUES (?,?,?,?,?)",
            (edge.id, edge.tree, edge.type, edge.target, edge.created_at),
        )
        self.c.db.executemany(
            "INSERT INTO edge_sources VALUES (?,?,?,?)",
            [(edge.id, i, src, role) for i, (src, role) in enumerate(edge.sources)],
        )

    def edges_of(self, node_id: str) -> list[Edge]:
        rows = self.c.db.execute(
            "SELECT e.id, e.tree_id, e.type, e.target_id, e.created_at, s.source_id, s.role"
            " FROM edges e JOIN edge_sources s ON s.edge_id = e.id"
            " WHERE e.id IN (SELECT id FROM edges WHERE target_id = ?"
            " UNION SELECT edge_id FROM edge_sources WHERE source_id = ?)"
            " ORDER BY e.id, s.position",
            (node_id, node_id),
        ).fetchall()
        edges: dict[str, list[Any]] = {}
        for eid, tree, etype, target, created, source, role in rows:
            edges.setdefault(eid, [tree, etype, target, created, []])[4].append((source, role))
        return [Edge(eid, t, ty, tuple(src), tg, c) for eid, (t, ty, tg, c, src) in edges.items()]
