"""The conformance suite (a representative part of the graph, ref and context tests)
with reads routed to hot standbys: the same results as on one server, and every test
has reads served by a standby (read-your-writes makes a standby see what was just
written, or the router would have fallen back to the primary)."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

import loomdb
from cluster import Cluster
from loomdb import Loom
from test_context import TestNormalizedShape, TestWhatEntersTheContext
from test_graph import TestComputedViews, TestHeadish, TestTrees
from test_refs import TestSessions, TestTheLogLineIsTheCompareAndSwap, TestViews

pytestmark = [pytest.mark.postgres, pytest.mark.replicas]

__all__ = [
    "TestComputedViews", "TestHeadish", "TestNormalizedShape", "TestSessions",
    "TestTheLogLineIsTheCompareAndSwap", "TestTrees", "TestViews", "TestWhatEntersTheContext",
]


@pytest.fixture(scope="module")
def database(cluster: Cluster) -> Iterator[str]:
    """One database on the test cluster for this module (each test takes a schema)."""
    name = f"loomdb_rep_{secrets.token_hex(5)}"
    cluster.create_database(name)
    try:
        yield name
    finally:
        cluster.drop_database(name)


@pytest.fixture(params=["replicas"])
def store_url(request: pytest.FixtureRequest, cluster: Cluster, database: str,
              tmp_path: Path) -> Iterator[str]:
    """A fresh schema on the test cluster's primary, both standbys named as replicas
    (a schema is much cheaper to make than a database, on the standbys too)."""
    schema = f"s_{secrets.token_hex(5)}"
    with psycopg.connect(cluster.primary.dsn(database), autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield (cluster.url(database, options=f"-csearch_path%3D{schema}")
               + f"&blobs=file://{tmp_path / 'blobs'}")
    finally:
        with psycopg.connect(cluster.primary.dsn(database), autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture
def loom(store_url: str) -> Iterator[Loom]:
    with loomdb.open(store_url) as lm:
        yield lm
        served = lm.backend.served  # type: ignore[attr-defined]
    standby_reads = sum(n for where, n in served.items() if where != "primary")
    assert standby_reads > 0, f"no read went to a standby: {served}"


@pytest.fixture
def backend_kind() -> str:
    return "postgres"
