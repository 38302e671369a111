"""The server backend: PostgreSQL through psycopg 3, composed of per-area stores over
one runner (`connections.py`: the pool, transactions, the read and write seams).

What differs from SQLite lives in `nodes.py` (contents in their own table, one
recursive walk), `refs.py` (the head on the refs row, locked inside a write),
`edges.py` and `forget.py`; drafts lock their ref's row (`drafts.DraftsPostgres`);
the rest is the SQL both dialects share. Opening a store by URL is `opening.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...errors import InvalidInput
from ...model import now
from .. import migrations, partitions
from ..base import Backend
from ..blobmeta import BlobMetaSQL
from ..drafts import DraftsPostgres
from ..overlay import MetaSQL
from ..provenance import ProvenanceSQL
from ..replicas import ReplicaOptions
from ..trees import TREE_COLUMNS, TreeSQL
from .connections import Connections
from .edges import PostgresEdges
from .forget import PostgresForget
from .nodes import HOT_QUERIES, PostgresNodes
from .refs import PostgresRefs

#: key of the advisory lock that serializes concurrent migrations of one database
_MIGRATION_LOCK = 0x6C6F6F6D  # "loom"
#: a tree with its node count and latest change, in one lateral scan
TREE_STATS = (
    TREE_COLUMNS + " s.count, s.last FROM trees t"
    " LEFT JOIN LATERAL (SELECT count(*) AS count, max(n.created_at) AS last FROM nodes n"
    " WHERE n.tree_id = t.id) s ON true "
)
#: the stored bodies that may name a blob
BLOB_BODIES = "SELECT body FROM contents WHERE body LIKE '%sha256:%'"


class PostgresBackend(Backend):
    """PostgreSQL storage; see the module docstring."""

    dialect = "postgres"
    runner: Connections

    def __init__(self, url: str, *, conninfo: str | None = None,
                 prepare_threshold: int | None = 1, pool_size: int = 8,
                 timeout: float = 60.0, replicas: ReplicaOptions | None = None,
                 partitions: int = 0) -> None:
        self.url = url
        self.runner = c = Connections(
            url, conninfo=conninfo, prepare_threshold=prepare_threshold,
            pool_size=pool_size, timeout=timeout, replicas=replicas)
        #: partitions asked for by the URL (a new store is split by tree at migrate)
        self._partitions = partitions
        self.nodes = PostgresNodes(c)
        self.edges = PostgresEdges(c)
        self.refs = PostgresRefs(c)
        self.trees = TreeSQL(c, TREE_STATS)
        self.meta = MetaSQL(c)
        self.provenance = ProvenanceSQL(c)
        self.drafts = DraftsPostgres(c)
        self.blob_meta = BlobMetaSQL(c, BLOB_BODIES)
        self.forget = PostgresForget(c, self.nodes)

    @property
    def split(self) -> int:
        """How many partitions `nodes` has (0: not split by tree)."""
        return self.runner.split

    @property
    def served(self) -> dict[str, int]:
        """Reads outside transactions served per server ("primary" or HOST:PORT)."""
        return self.runner.served

    def explain(self, query: str, args: Sequence[Any], analyze: bool = False) -> str:
        """The plan of one of HOT_QUERIES (by name) or of any SQL with %s parameters."""
        sql = HOT_QUERIES.get(query, query)
        opts = "ANALYZE, BUFFERS, " if analyze else ""
        rows = self.runner.fetch_all(f"EXPLAIN ({opts}COSTS OFF) {sql}", args)
        return "\n".join(r[0] for r in rows)

    def migrate(self) -> list[str]:
        applied = self._migrate()
        self._split()
        return applied

    def _split(self) -> None:
        """Split a new store by tree when the URL asks (partitions.py); learn whether
        the store is split either way, so hot reads pin themselves to one tree."""
        c = self.runner
        count = c.fetch_one(partitions.COUNT_SQL)
        c.split = int(count[0]) if count else 0
        if not self._partitions or c.split:
            return
        with self.transaction():
            c.run("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            if c.fetch_one(partitions.COUNT_SQL)[0]:  # type: ignore[index]
                c.split = int(c.fetch_one(partitions.COUNT_SQL)[0])  # type: ignore[index]
                return
            if c.fetch_one("SELECT EXISTS (SELECT 1 FROM nodes)")[0]:  # type: ignore[index]
                raise InvalidInput("partitions", "only a new, empty store can be split by "
                                   "tree; copy into one: loomdb migrate --to URL --partitions N")
            c.script(partitions.split_sql(self._partitions))
        c.split = self._partitions

    def _migrate(self) -> list[str]:
        if set(migrations.names("postgres")) <= set(self.applied_migrations()):
            return []
        scripts = migrations.scripts("postgres")
        applied: list[str] = []
        c = self.runner
        with self.transaction():
            # concurrent first opens (one per process) apply each script exactly once
            c.run("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            c.run(
                'CREATE TABLE IF NOT EXISTS loomdb_migrations (name text COLLATE "C" '
                "PRIMARY KEY, applied_at text NOT NULL)"
            )
            done = set(self.applied_migrations())
            for name, sql in scripts:
                if name in done:
                    continue
                c.script(sql)  # one round trip per script
                c.run("INSERT INTO loomdb_migrations VALUES (%s, %s)", (name, now()))
                applied.append(name)
        return applied

    def settle(self) -> None:
        self.runner.run("ANALYZE")

    def areas_stamp(self) -> object:
        return self.runner.area_notices

    def applied_migrations(self) -> list[str]:
        c = self.runner
        if c.fetch_one("SELECT to_regclass('loomdb_migrations')")[0] is None:  # type: ignore[index]
            return []
        return [r[0] for r in c.fetch_all("SELECT name FROM loomdb_migrations ORDER BY name")]
