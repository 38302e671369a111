"""Storage conformance: `loomdb.testing.StorageConformance` (each area interface of
`Backend`, called directly, behaves the same on every backend; transactions are per
thread) run on both of the project's backends, as a backend author runs it on theirs.
Below it, what is one backend's own: a store that stays locked is `StoreBusy`."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import unittest
from pathlib import Path

import pytest

from loomdb import StoreBusy
from loomdb.blobs import BlobStore
from loomdb.model import Tree
from loomdb.store import open_store
from loomdb.store.base import Backend
from loomdb.testing import StorageConformance

BACKENDS = [b for b in os.environ.get("LOOMDB_TEST_BACKENDS", "sqlite,postgres").split(",") if b]

AT = "2026-01-01T00:00:00.000Z"


def _tree(tid: str, title: str = "t") -> Tree:
    return Tree(id=tid, title=title, mode="dialogue", created_at=AT, updated_at=AT)


class TestSQLiteConformance(StorageConformance, unittest.TestCase):
    def make_store(self) -> tuple[Backend, BlobStore]:
        folder = self.enterContext(_tempdir())
        return open_store(str(Path(folder) / "store"))


@pytest.mark.postgres
@pytest.mark.skipif("postgres" not in BACKENDS, reason="PostgreSQL is not among LOOMDB_TEST_BACKENDS")
class TestPostgresConformance(StorageConformance, unittest.TestCase):
    def make_store(self) -> tuple[Backend, BlobStore]:
        from pg import fresh_postgres_url

        folder = self.enterContext(_tempdir())
        url = self.enterContext(fresh_postgres_url(migrated=True))
        return open_store(url + ("&" if "?" in url else "?") + f"blobs=file://{folder}/blobs")


def _tempdir() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="loomdb-conformance-")


def test_the_suite_fails_a_backend_that_breaks_the_contract() -> None:
    """A backend that keeps a cleared draft fails `test_drafts` and only it."""
    from loomdb.store.drafts import DraftSQL
    from loomdb.store.sqlite import SQLiteBackend

    class KeptDrafts(DraftSQL):
        def set_draft(self, ref_name: str, text: str, at: str) -> None:
            if text:
                super().set_draft(ref_name, text, at)

    class KeepsDrafts(SQLiteBackend):
        def __init__(self, path: Path) -> None:
            super().__init__(path)
            self.drafts = KeptDrafts(self.runner)

    class Broken(StorageConformance, unittest.TestCase):
        def make_store(self) -> tuple[Backend, BlobStore]:
            folder = Path(self.enterContext(_tempdir()))  # a fresh store per test
            return KeepsDrafts(folder / "broken.db"), BlobStore(folder / "blobs")

    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(Broken).run(result)
    assert result.testsRun == len([n for n in dir(StorageConformance) if n.startswith("test_")])
    assert [case.id().rsplit(".", 1)[1] for case, _ in result.failures] == ["test_drafts"]
    assert result.errors == []


def test_sqlite_locked_by_another_process_is_store_busy(tmp_path: Path) -> None:
    from loomdb.store.sqlite import SQLiteBackend

    file = tmp_path / "busy.db"
    backend = SQLiteBackend(file, timeout=0.2)
    backend.migrate()
    other = sqlite3.connect(file, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another writer holds the file
    try:
        with pytest.raises(StoreBusy), backend.transaction():
            backend.trees.insert_tree(_tree("B"))
    finally:
        other.execute("ROLLBACK")
        other.close()
    with backend.transaction():  # and the store works again afterwards
        backend.trees.insert_tree(_tree("B"))
    assert backend.trees.get_tree("B") is not None
    backend.close()


@pytest.mark.postgres
@pytest.mark.skipif("postgres" not in BACKENDS, reason="PostgreSQL is not among LOOMDB_TEST_BACKENDS")
def test_postgres_without_a_free_connection_is_store_busy() -> None:
    from loomdb.store.postgres import PostgresBackend, split_url
    from pg import fresh_postgres_url

    with fresh_postgres_url() as url:
        backend = PostgresBackend(url, conninfo=split_url(url)[0], pool_size=1, timeout=0.3)
        backend.migrate()
        inside, release = threading.Event(), threading.Event()

        def holder() -> None:
            with backend.transaction():
                inside.set()
                release.wait(30)

        t = threading.Thread(target=holder)
        t.start()
        try:
            assert inside.wait(30)
            with pytest.raises(StoreBusy):
                backend.trees.get_tree("x")
        finally:
            release.set()
            t.join(30)
        assert backend.trees.get_tree("x") is None
        backend.close()


def test_the_suite_imports_no_test_runner() -> None:
    """`loomdb.testing` runs under plain unittest: importing it loads no pytest."""
    code = "import sys, loomdb.testing; print('pytest' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "False"
