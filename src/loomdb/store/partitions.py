"""Hash partitioning by tree on PostgreSQL (declarative partitioning).

A new PostgreSQL store opened with `partitions=N` in its URL (or filled by
`loomdb migrate --to URL --partitions N`) has its per-tree tables split into N hash
partitions of `tree_id`: the nodes and what hangs on them (sources, selections, edges,
overlay, tags, generations, compactions), and the ref log. Every one of the first
already carries tree_id in its primary key and every unique key (the Citus layout needs
the same), so the split changes no key. The ref log's key becomes (tree_id, ref_name,
seq): a ref lives in one tree, its compare-and-swap is on its `refs` row, and a name
deleted and made again in another tree logs there after its last line, so the log's
order per name holds; an index on (ref_name, seq) serves a name's whole history. The
backend then pins its hot reads to the node's (or the ref's) tree (`pinned` queries in
postgres.py), so each prunes to one partition.

Only an empty store is split: moving rows between layouts is a copy
(`loomdb migrate --partitions N`), which verifies the hash chain at the target.
"""

from __future__ import annotations

from ..errors import InvalidInput

#: the per-tree tables split by tree_id
TABLES = (
    "nodes", "node_sources", "node_selections", "edges", "edge_sources", "node_meta",
    "node_tags", "generations", "compactions",
)


def parse(raw: str | None) -> int:
    """The `partitions=` URL option: 0 (none) or a count from 2 to 1024."""
    if raw is None:
        return 0
    if not raw.isdigit() or not (raw == "0" or 2 <= int(raw) <= 1024):
        raise InvalidInput("partitions", f"{raw!r} is not a partition count (2 to 1024)")
    return int(raw)


def with_partitions(url: str, count: int) -> str:
    """`url` asking for `count` partitions (`loomdb migrate --partitions N`); 0 leaves it."""
    if not count:
        return url
    if not url.startswith(("postgresql://", "postgres://")):
        raise InvalidInput("--partitions", "partitioning is for a PostgreSQL target")
    return f"{url}{'&' if '?' in url else '?'}partitions={count}"


def split_sql(count: int) -> str:
    """The script that recreates each empty per-tree table as `count` hash partitions
    of tree_id, with the same columns, defaults, checks, keys and indexes."""
    out = []
    for table in (*TABLES, "ref_log"):
        old = f"{table}_unsplit"
        out.append(f"ALTER TABLE {table} RENAME TO {old};")
        if table == "ref_log":  # keyed by tree from here on (see the module docstring)
            out.append(f"CREATE TABLE {table} (LIKE {old} INCLUDING DEFAULTS)"
                       " PARTITION BY HASH (tree_id);")
            out.append(f"ALTER TABLE {table} ALTER tree_id SET NOT NULL,"
                       " ADD PRIMARY KEY (tree_id, ref_name, seq);")
            out.append(f"CREATE INDEX ref_log_name ON {table} (ref_name, seq);")
        else:
            out.append(f"CREATE TABLE {table} (LIKE {old} INCLUDING ALL) PARTITION BY HASH (tree_id);")
        out.append(f"DROP TABLE {old};")
        out.extend(
            f"CREATE TABLE {table}_p{i} PARTITION OF {table}"
            f" FOR VALUES WITH (MODULUS {count}, REMAINDER {i});"
            for i in range(count)
        )
    return "\n".join(out)


#: how many partitions `nodes` has (0: not partitioned)
COUNT_SQL = (
    "SELECT count(i.inhrelid) FROM pg_class c LEFT JOIN pg_inherits i ON i.inhparent = c.oid"
    " WHERE c.oid = to_regclass('nodes') AND c.relkind = 'p'"
)
