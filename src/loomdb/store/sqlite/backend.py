"""The embedded backend: one SQLite file in WAL mode, composed of per-area stores over
one runner (`connections.py`); what differs from PostgreSQL lives in `nodes.py`
(segments, walks, content inline), `refs.py` (a head is its log's last line),
`edges.py` and `forget.py`; the rest is the SQL both dialects share.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ...model import now
from .. import migrations
from ..base import Backend
from ..blobmeta import BlobMetaSQL
from ..drafts import DraftSQL
from ..overlay import MetaSQL
from ..provenance import ProvenanceSQL
from ..trees import TREE_COLUMNS, TreeSQL
from .connections import Connections
from .edges import SQLiteEdges
from .forget import SQLiteForget
from .nodes import SQLiteNodes, tree_rows
from .refs import SQLiteRefs

#: a tree with its node count and latest change: both read its segments
TREE_STATS = (
    TREE_COLUMNS + f" (SELECT count(*) FROM {tree_rows('t.id')}),"
    f" (SELECT max(n.created_at) FROM {tree_rows('t.id')}) FROM trees t "
)
#: the stored bodies that may name a blob
BLOB_BODIES = "SELECT body FROM nodes WHERE body IS NOT NULL AND body LIKE '%sha256:%'"


class SQLiteBackend(Backend):
    """SQLite file storage; see the module docstring."""

    dialect = "sqlite"
    runner: Connections
    nodes: SQLiteNodes

    def __init__(
        self, path: str | Path, *, timeout: float = 60.0, synchronous: str = "normal",
    ) -> None:
        self.path = Path(path)
        self.runner = c = Connections(self.path, timeout=timeout, synchronous=synchronous)
        self.url = c.url
        self.nodes = SQLiteNodes(c)
        self.edges = SQLiteEdges(c)
        self.refs = SQLiteRefs(c)
        self.trees = TreeSQL(c, TREE_STATS)
        self.meta = MetaSQL(c)
        self.provenance = ProvenanceSQL(c)
        self.drafts = DraftSQL(c)
        self.blob_meta = BlobMetaSQL(c, BLOB_BODIES)
        self.forget = SQLiteForget(c, self.nodes, self.path)

    @property
    def synchronous(self) -> str:
        return self.runner.synchronous

    def migrate(self) -> list[str]:
        if set(migrations.names("sqlite")) <= set(self.applied_migrations()):
            return []  # the everyday open: one read, no write lock, no script read
        applied: list[str] = []
        db = self.runner
        with self.transaction():
            db.execute(
                "CREATE TABLE IF NOT EXISTS loomdb_migrations "
                "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
            done = set(self.applied_migrations())
            for name, sql in migrations.scripts("sqlite"):
                if name in done:
                    continue
                for stmt in migrations.statements(sql, sqlite3.complete_statement):
                    db.execute(stmt)
                db.execute("INSERT INTO loomdb_migrations VALUES (?, ?)", (name, now()))
                applied.append(name)
        return applied

    def areas_stamp(self) -> object:
        # the schema cookie: any table made by anyone changes it (the header page is
        # read by every transaction anyway)
        return self.runner.db.execute("PRAGMA schema_version").fetchone()[0]

    def applied_migrations(self) -> list[str]:
        try:
            rows = self.runner.execute("SELECT name FROM loomdb_migrations ORDER BY name")
        except sqlite3.OperationalError:
            return []
        return [r[0] for r in rows]
