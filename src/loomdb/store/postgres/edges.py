"""PostgreSQL's annotation and link edges (their sources keyed by tree too)."""

from __future__ import annotations

from ...model import Edge
from ..nodes import EdgeStore
from .connections import Connections


class PostgresEdges(EdgeStore):
    """`EdgeStore` on PostgreSQL."""

    def __init__(self, connections: Connections) -> None:
        self.c = connections

    def insert_edge(self, edge: Edge) -> None:
        self.c.run(
            "INSERT INTO edges VALUES (%s,%s,%s,%s,%s)",
            (edge.id, edge.tree, edge.type, edge.target, edge.created_at),
        )
        self.c.run_many(
            "INSERT INTO edge_sources VALUES (%s,%s,%s,%s,%s)",
            [(edge.id, edge.tree, i, src, role) for i, (src, role) in enumerate(edge.sources)],
        )

    def edges_of(self, node_id: str) -> list[Edge]:
        rows = self.c.fetch_all(
            "SELECT e.id, e.tree_id, e.type, e.target_id, e.created_at, s.source_id, s.role"
            " FROM edges e LEFT JOIN edge_sources s ON s.edge_id = e.id AND s.tree_id = e.tree_id"
            " WHERE e.id IN (SELECT id FROM edges WHERE target_id = %s"
            " UNION SELECT edge_id FROM edge_sources WHERE source_id = %s)"
            " ORDER BY e.id, s.position",
            (node_id, node_id),
        )
        out: list[Edge] = []
        for eid, tree, etype, target, created, source, role in rows:
            if not out or out[-1].id != eid:
                out.append(Edge(eid, tree, etype, (), target, created))
            if source is not None:
                last = out[-1]
                out[-1] = Edge(eid, tree, etype, (*last.sources, (source, role)), target, created)
        return out
