"""What only the PostgreSQL backend has to prove (the conformance suite covers the rest):
plans that use the indexes, keys ready for distribution by tree, concurrent migrations,
row locks and aborted transactions, URL handling and the fsspec blob store."""

from __future__ import annotations

import multiprocessing
import os
import random
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import loomdb
from loomdb import Loom
from loomdb.blobs import BlobStore, blob_id
from loomdb.errors import IntegrityError, InvalidInput, NotFound, RefConflict
from loomdb.objectstore import ObjectBlobStore
from loomdb.store import migrations
from loomdb.store.postgres import PostgresBackend, TransientConflict, open_postgres, split_url
from pg import fresh_postgres_url

pytestmark = pytest.mark.postgres

if "postgres" not in os.environ.get("LOOMDB_TEST_BACKENDS", "sqlite,postgres").split(","):
    pytest.skip("PostgreSQL is not among LOOMDB_TEST_BACKENDS", allow_module_level=True)


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    with fresh_postgres_url() as db:
        yield f"{db}?blobs=file://{tmp_path}/blobs"


@pytest.fixture
def pg(url: str) -> Iterator[Loom]:
    with loomdb.open(url) as loom:
        yield loom


def _bushy(loom: Loom, trees: int, size: int) -> list[tuple[str, list[str]]]:
    """`trees` random trees of `size` nodes with distinct content, written fast."""
    rng = random.Random(5)
    out = []
    for t in range(trees):
        tree, root = loom.new_tree(f"tree {t}")
        nodes = [root]
        with loom.backend.transaction():
            for i in range(size - 1):
                parent = nodes[rng.randrange(len(nodes))] if i % 3 else nodes[-1]
                nodes.append(loom.write_node(
                    tree=tree.id, parent=parent, blocks=[{"type": "text", "text": f"{t}.{i}"}],
                    role="user", author=None, source="human", options=None, cache=False,
                    kind="message", created_at=None))
        out.append((tree.id, [n.id for n in nodes]))
    loom.backend.execute("ANALYZE")
    return out


@pytest.fixture(scope="module")
def big() -> Iterator[tuple[Loom, list[tuple[str, list[str]]]]]:
    """Ten 1000-node trees, analyzed: big enough for the planner to prefer indexes."""
    with fresh_postgres_url() as db, loomdb.open(db + "?blobs=memory://plans") as loom:
        yield loom, _bushy(loom, 10, 1000)


class TestPlans:
    """The hot reads are index-driven (seed 001's index lists), checked with EXPLAIN."""

    def test_a_path_is_one_recursive_query_over_the_primary_key(self, big) -> None:
        loom, trees = big
        _, ids = trees[3]
        head = max(loom.nodes(ids), key=lambda n: n.depth).id
        plan = loom.backend.explain("walk", (head,))
        # a node's own scrubbed copy (`node_scrubs`, a few rows: a user's span
        # redaction) is read only for a redacted copy; the planner scans it while tiny
        plan = plan.replace("Seq Scan on node_scrubs", "(a node's own copy)")
        assert "Recursive Union" in plan and "Seq Scan" not in plan
        assert "Index Scan using nodes_pkey" in plan and "contents_pkey" in plan

    def test_a_long_path_never_analyzed_is_walked_step_by_step(self, pg) -> None:
        """A chain written in one transaction, before any ANALYZE (a benchmark's or an
        import's fresh store): the walk still probes the primary key step by step, never
        scans or hashes the whole nodes table (a scan at every step made 5,000 steps take
        6 s), and is not costed high enough to be JIT-compiled."""
        tree, root = pg.new_tree("start")
        node = root
        with pg.backend.transaction():
            for i in range(300):
                node = pg.write_node(
                    tree=tree.id, parent=node, blocks=[{"type": "text", "text": f"step {i}"}],
                    role="user", author=None, source="human", options=None, cache=False,
                    kind="message", created_at=None)
        plan = pg.backend.explain("walk", (node.id,), analyze=True)
        plan = plan.replace("Seq Scan on node_scrubs", "(a node's own copy)")
        assert "Recursive Union" in plan and "rows=301 loops=1" in plan
        assert "Hash" not in plan and "Seq Scan" not in plan and "JIT" not in plan
        assert "Index Scan using nodes_pkey" in plan and "contents_pkey" in plan

    def test_a_merge_climbs_from_both_ends_over_the_primary_key(self, big) -> None:
        loom, trees = big
        tree, ids = trees[5]
        deep = sorted(loom.nodes(ids), key=lambda n: -n.depth)[:2]
        plan = loom.backend.explain("climb", (tree, deep[0].id, deep[1].id, tree, 8,
                                              deep[1].id))
        # (node_sources is empty here: the planner may scan it whole)
        assert "Recursive Union" in plan and "Seq Scan on nodes" not in plan
        assert "Hash Join" not in plan and "Index Scan using nodes_pkey" in plan

    def test_children_use_the_children_index(self, big) -> None:
        loom, trees = big
        plan = loom.backend.explain("children", (trees[2][1][10],))
        assert "nodes_children" in plan and "Seq Scan" not in plan

    def test_leaves_read_one_tree_through_its_index(self, big) -> None:
        loom, trees = big
        plan = loom.backend.explain("leaves", (trees[4][0],))
        assert "Seq Scan" not in plan
        assert "nodes_tree" in plan or "nodes_children" in plan

    def test_node_lookups_by_id_alone_use_the_primary_key(self, big) -> None:
        loom, trees = big
        plan = loom.backend.explain(
            "SELECT id FROM nodes WHERE id = ANY(%s::text[])", (trees[1][1][:50],))
        assert "nodes_pkey" in plan and "Seq Scan" not in plan


@pytest.mark.parametrize("query", ["nodes", "path_rows"])
def test_nodes_read_by_id_probe_their_content_whatever_the_estimate(pg: Loom,
                                                                  query: str) -> None:
    """An append's parent is read by id. Under a generic plan (psycopg prepares a
    statement run often; its plan is kept) on tables not analyzed since they grew,
    the estimate is hundreds of nodes, and the plan that hashed every content row
    made each read cost the store's size (appends in a transaction slowed as the store
    grew); the content is probed by its key instead."""
    import psycopg

    from loomdb.store.postgres import HOT_QUERIES

    with psycopg.connect(pg.backend.url.split("?")[0], autocommit=True) as conn:
        for table in ("nodes", "contents"):  # statistics that lag: none at all
            conn.execute(f"ALTER TABLE {table} SET (autovacuum_enabled = false)")
        conn.execute("INSERT INTO contents SELECT sha256(i::text::bytea), 'text ' || i"
                     " FROM generate_series(1, 20000) i")
        conn.execute(
            "INSERT INTO nodes (id, tree_id, slot_id, depth, role, kind, author, source,"
            " content_id, cache, flags, tokens, total_tokens, created_at, chain_hash)"
            " SELECT lpad(i::text, 26, '0'), 'T', lpad(i::text, 26, '0'), 0, 'user',"
            " 'message', 'a', 'human', sha256(i::text::bytea), 0, 0, 0, 0, '2026', '\\x00'"
            " FROM generate_series(1, 20000) i")
        conn.execute("SET plan_cache_mode = force_generic_plan")
        conn.execute(f"PREPARE by_id(text[]) AS {HOT_QUERIES[query].replace('%s', '$1')}")
        plan = "\n".join(r[0] for r in conn.execute(
            "EXPLAIN (COSTS OFF) EXECUTE by_id(ARRAY[lpad('7', 26, '0')])").fetchall())
        found = conn.execute("EXECUTE by_id(ARRAY[lpad('7', 26, '0')])").fetchall()
    assert "contents_pkey" in plan and "Seq Scan" not in plan, plan
    assert len(found) == 1 and "text 7" in found[0]


class TestKeysForDistribution:
    """Every per-tree table carries tree_id in every unique key (a Citus distribution
    column); the global tables are the content-addressed ones and the ref namespace."""

    GLOBAL = {"contents", "blobs", "loomdb_migrations",  # content-addressed / bookkeeping
              "refs", "ref_selections", "ref_log", "drafts",  # keyed by the ref name
              # the record of forgetting outlives its trees: ids forgotten store-wide (an
              # import must not bring one back into any tree), content-addressed marks
              "forget_log", "forgotten", "redactions", "forget_settings", "scrubs"}

    def test_every_per_tree_key_holds_the_tree_id(self, pg: Loom) -> None:
        rows = pg.backend.execute(
            "SELECT c.relname, i.indexrelid::regclass::text,"
            " array(SELECT a.attname::text FROM pg_attribute a WHERE a.attrelid = c.oid"
            "  AND a.attnum = ANY(i.indkey))"
            " FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid"
            " JOIN pg_namespace s ON s.oid = c.relnamespace"
            " WHERE i.indisunique AND s.nspname = current_schema()")
        per_tree = {t for t, _, _ in rows} - self.GLOBAL
        with_tree_id = {t for (t,) in pg.backend.execute(
            "SELECT table_name FROM information_schema.columns WHERE column_name = 'tree_id'"
            " AND table_schema = current_schema()")}
        assert per_tree - {"trees"} <= with_tree_id, "a new table must be global or per tree"
        assert {"nodes", "trees", "edges", "node_meta", "node_tags", "node_sources",
                "node_selections", "edge_sources", "generations", "compactions"} <= per_tree
        for table, index, cols in rows:
            if table in self.GLOBAL:
                continue
            key = "id" if table == "trees" else "tree_id"
            assert key in cols, f"{index} on {table} lacks {key}: {cols}"

    def test_a_node_id_is_unique_across_trees(self, pg: Loom) -> None:
        _, a = pg.new_tree("a")
        with pytest.raises(InvalidInput, match="already in the store"):
            pg.new_tree("b", node_id=a.id)
        assert [t.title for t in pg.trees()] == ["a"]


class TestMigrationsOnPostgres:
    def test_first_opens_from_many_processes_apply_each_script_once(self, url: str) -> None:
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(4) as pool:
            applied = pool.map(_open_and_migrate, [url] * 4)
        names = [n for n, _ in migrations.scripts("postgres")]
        assert sorted(n for run in applied for n in run) == names
        with loomdb.open(url) as loom:
            assert loom.backend.applied_migrations() == names

    def test_the_dialects_have_the_same_migrations(self) -> None:
        assert [n for n, _ in migrations.scripts("postgres")] == [
            n for n, _ in migrations.scripts("sqlite")]


def _open_and_migrate(url: str) -> list[str]:
    backend, _ = open_postgres(url)
    try:
        return backend.migrate()
    finally:
        backend.close()


class TestTransactions:
    def test_reads_outside_a_transaction_leave_none_open(self, pg: Loom) -> None:
        import psycopg

        pg.new_tree("q", session="main")
        pg.path("main")
        # every connection of the store's pool is idle, none inside a transaction
        rows = pg.backend.execute(
            "SELECT state FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid()")
        assert all(state == "idle" for (state,) in rows), rows
        conn = pg.backend.runner._pool.getconn()  # type: ignore[attr-defined]
        try:
            assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        finally:
            pg.backend.runner._pool.putconn(conn)  # type: ignore[attr-defined]

    def test_a_writer_of_a_ref_waits_for_the_other_instead_of_failing(
        self, pg: Loom, url: str
    ) -> None:
        _, root = pg.new_tree("q", session="main")
        other = PostgresBackend(url, conninfo=split_url(url)[0])
        entered, done = threading.Event(), threading.Event()
        moved: list[bool] = []

        def second() -> None:
            with other.transaction():
                entered.set()
                ref = other.refs.get_ref("main")  # blocks on the row lock until we commit
                moved.append(ref is not None and ref.node != root.id)
            done.set()

        with pg.backend.transaction():
            pg.backend.refs.get_ref("main")
            thread = threading.Thread(target=second)
            thread.start()
            entered.wait(5)
            assert not done.wait(0.5), "the second writer did not wait for the row lock"
            n = pg.append("main", "first")
        thread.join(10)
        other.close()
        assert moved == [True] and pg.ref("main").node == n.id

    def test_a_deadlock_surfaces_as_a_retryable_conflict(self, pg: Loom, url: str) -> None:
        _, root = pg.new_tree("q", session="a")
        pg.fork(root.id, "b")
        other = PostgresBackend(url, conninfo=split_url(url)[0])
        both = threading.Barrier(2, timeout=10)
        errors: list[BaseException] = []

        def cross(backend: PostgresBackend, first: str, then: str) -> None:
            try:
                with backend.transaction():
                    backend.refs.get_ref(first)
                    both.wait()
                    backend.refs.get_ref(then)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=cross, args=(pg.backend, "a", "b")),
                   threading.Thread(target=cross, args=(other, "b", "a"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        other.close()
        assert len(errors) == 1 and isinstance(errors[0], TransientConflict)
        assert isinstance(errors[0], RefConflict) and "retry" in str(errors[0])

    def test_raw_sql_takes_sqlite_style_placeholders(self, pg: Loom) -> None:
        _, root = pg.new_tree("q '?' 100%")
        assert pg.backend.execute("SELECT id FROM nodes WHERE id = ? AND '?' = '?'",
                                  (root.id,)) == [(root.id,)]
        assert pg.backend.execute("SELECT title FROM trees WHERE title LIKE ?",
                                  ("%100%",)) == [("q '?' 100%",)]


class TestUrls:
    def test_the_blob_location_is_taken_out_of_the_url(self) -> None:
        conn, blobs = split_url("postgresql://u:p%40ss@h:5433/db?sslmode=disable"
                                "&blobs=s3%3A%2F%2Fbucket%2Floom&options=-c%20x%3Dy+z")
        assert conn == "postgresql://u:p%40ss@h:5433/db?sslmode=disable&options=-c%20x%3Dy+z"
        assert blobs == "s3://bucket/loom"
        assert split_url("postgresql://h/db") == ("postgresql://h/db", None)

    def test_blobs_default_to_the_environment_then_a_local_folder(
        self, url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        from loomdb.settings import Settings

        bare = split_url(url)[0]
        backend, blobs = open_postgres(
            bare, Settings.from_environ({"LOOMDB_BLOBS": "memory://from-env"}))
        backend.close()
        assert isinstance(blobs, ObjectBlobStore) and blobs.url == "memory://from-env"
        monkeypatch.setenv("LOOMDB_BLOBS", "memory://from-env")  # read at an edge only
        with loomdb.open(bare) as lm:
            assert isinstance(lm.blobs, ObjectBlobStore) and lm.blobs.url == "memory://from-env"
        monkeypatch.delenv("LOOMDB_BLOBS")
        monkeypatch.chdir(tmp_path)
        backend, blobs = open_postgres(bare)
        backend.close()
        assert isinstance(blobs, BlobStore) and str(blobs.root) == ".loomdb-blobs"
        backend, blobs = open_postgres(bare + "?blobs=file:///srv/x")
        backend.close()
        assert isinstance(blobs, BlobStore) and str(blobs.root) == "/srv/x"

    def test_a_store_with_blobs_in_an_object_store_round_trips(self, url: str) -> None:
        memory = split_url(url)[0] + "?blobs=memory://roundtrip-" + os.urandom(4).hex()
        with loomdb.open(memory) as loom:
            block = {"type": "image", "data": "iVBORw0KGgo=", "mime_type": "image/png"}
            _, root = loom.new_tree([block])
            ref = root.content[0]["ref"]
            assert loom.blob(ref) == b"\x89PNG\r\n\x1a\n"
            assert isinstance(loom.blobs, ObjectBlobStore) and loom.blobs.has(ref)


class TestObjectBlobStore:
    @pytest.fixture(params=["memory", "file"])
    def store(self, request: pytest.FixtureRequest, tmp_path: Path) -> ObjectBlobStore:
        if request.param == "memory":
            return ObjectBlobStore(f"memory://blobs-{os.urandom(4).hex()}/root")
        return ObjectBlobStore(f"file://{tmp_path}/objects")

    def test_put_is_idempotent_and_get_verifies(self, store: ObjectBlobStore) -> None:
        data = b"some bytes"
        bid = store.put(data)
        assert bid == blob_id(data) == store.put(data)
        assert store.has(bid) and store.get(bid) == data
        hexd = bid[7:]
        assert store.fs.exists(f"{store.root}/{hexd[:2]}/{hexd[2:4]}/{hexd}")
        assert not [p for p in store.fs.find(store.root) if ".tmp-" in p]

    def test_a_changed_object_is_an_integrity_error(self, store: ObjectBlobStore) -> None:
        bid = store.put(b"original")
        hexd = bid[7:]
        store.fs.pipe_file(f"{store.root}/{hexd[:2]}/{hexd[2:4]}/{hexd}", b"forged")
        with pytest.raises(IntegrityError) as info:
            store.get(bid)
        assert info.value.expected == bid and info.value.got == blob_id(b"forged")

    def test_missing_and_malformed_ids(self, store: ObjectBlobStore) -> None:
        with pytest.raises(NotFound):
            store.get(blob_id(b"never stored"))
        assert not store.has(blob_id(b"never stored"))
        for bad in ("sha256:../../etc/passwd", "../x", "sha256:" + "A" * 64):
            with pytest.raises(InvalidInput):
                store.get(bad)


class TestCitusStatements:
    """The statements used when the citus extension is present (walk and subtree pinned
    to one tree, no subquery inside INSERT) give the same answers; run here on plain
    PostgreSQL, since CI has no Citus cluster."""

    def test_pinned_statements_answer_like_the_plain_ones(self, tmp_path: Path) -> None:
        answers = []
        for citus in (False, True):
            with fresh_postgres_url() as db, loomdb.open(f"{db}?blobs=memory://c{citus}") as loom:
                loom.backend.runner.citus = citus
                _, root = loom.new_tree("q", session="main", node_id="01J0000000000000000000000Q",
                                        created_at="2025-01-01T00:00:00.000000Z")
                at = iter(f"2025-01-01T00:00:{i:02d}.000000Z" for i in range(1, 60))
                ids = [root.id]
                for i in range(6):
                    ids.append(loom.append("main", f"m{i}", node_id=f"01J00000000000000000000{i:03d}",
                                           created_at=next(at)).id)
                loom.edit(ids[2], "m1'", created_at=next(at))
                loom.fork(ids[3], "side")
                side = loom.append("side", "s", node_id="01J0000000000000000000S001",
                                   created_at=next(at))
                loom.prune(side.id)
                answers.append({
                    "path": loom.path("main"), "leaves": loom.leaves(loom.tree("main").id),
                    "all": loom.leaves(loom.tree("main").id, include_pruned=True),
                    "subtree": sorted(loom.backend.nodes.subtree(ids[3])),
                    "versions": len(loom.versions(ids[2])), "children": loom.children(ids[3]),
                    "verify": loom.verify().ok, "hash": loom.node("main").chain_hash,
                })
        assert answers[0] == answers[1]
        assert answers[1]["verify"] and len(answers[1]["subtree"]) == 5


def test_a_big_import_leaves_the_planner_statistics_current(tmp_path: Path, url: str) -> None:
    """A table filled by one import and not yet analyzed made a path's walk take
    seconds (the planner guessed the table empty); an import of 1,000+ messages, and a
    copy, analyze it before they return. `reltuples` is -1 for a table never analyzed."""
    from loomdb.interop.importer import SETTLE_AFTER

    source = str(tmp_path / "source")
    with loomdb.open(source) as lm:
        lm.new_tree("the start", session="s")
        with lm.backend.transaction():
            for i in range(SETTLE_AFTER + 10):
                lm.append("s", f"step {i}", role="user")
        lm.export_file(tmp_path / "all.json")
    with loomdb.open(url) as pg:
        never = pg.backend.execute("SELECT reltuples FROM pg_class WHERE relname = 'nodes'")
        assert never[0][0] == -1
        report = pg.import_file(tmp_path / "all.json")
        assert report.nodes == SETTLE_AFTER + 11
        counted = pg.backend.execute("SELECT reltuples FROM pg_class WHERE relname = 'nodes'")
        assert counted[0][0] == SETTLE_AFTER + 11
    with fresh_postgres_url() as other:
        loomdb.api.copy_store(source, other)
        with loomdb.open(other) as copied:
            rows = copied.backend.execute("SELECT reltuples FROM pg_class WHERE relname = 'nodes'")
            assert rows[0][0] == SETTLE_AFTER + 11
