"""Migrations: ordered, recorded, safe to run twice; an older store is brought up to date."""

from __future__ import annotations

import loomdb
from loomdb.store import migrations


class TestMigrations:
    def test_running_them_twice_applies_nothing_the_second_time(self, store_url: str) -> None:
        with loomdb.open(store_url) as loom:
            names = loom.backend.applied_migrations()
            assert names == [n for n, _ in migrations.scripts(_dialect(store_url))]
            assert loom.backend.migrate() == []
            assert loom.backend.applied_migrations() == names

    def test_an_older_schema_is_upgraded_and_keeps_its_data(self, store_url: str) -> None:
        with loomdb.open(store_url) as loom:
            tree, root = loom.new_tree("kept across upgrades", session="main")
            # take 0002 back out, as if an older loomdb had never applied it
            with loom.backend.transaction():
                loom.backend.execute("DROP TABLE generations")
                loom.backend.execute("DROP TABLE compactions")
                loom.backend.execute(
                    "DELETE FROM loomdb_migrations WHERE name = '0002_generations'")
            assert "0002_generations" not in loom.backend.applied_migrations()
        with loomdb.open(store_url) as loom:
            assert "0002_generations" in loom.backend.applied_migrations()
            assert loom.backend.execute("SELECT count(*) FROM generations") == [(0,)]
            assert loom.node("main").id == root.id
            assert loom.verify().ok

    def test_scripts_are_ordered_by_name(self) -> None:
        for dialect in ("sqlite", "postgres"):
            names = [n for n, _ in migrations.scripts(dialect)]
            assert names == sorted(names) and names[0] == "0001_core"

    def test_both_backends_have_the_same_migrations(self) -> None:
        assert [n for n, _ in migrations.scripts("sqlite")] == [
            n for n, _ in migrations.scripts("postgres")]


def _dialect(url: str) -> str:
    return "postgres" if url.startswith("postgres") else "sqlite"


def test_opening_an_up_to_date_store_waits_for_no_writer(tmp_path: object) -> None:
    """An everyday open reads the migration record and takes no write lock: it opens
    and reads while another process holds the store's write lock."""
    import sqlite3
    import threading
    from pathlib import Path

    path = Path(str(tmp_path)) / "store"
    with loomdb.open(str(path)) as loom:
        loom.new_tree("hello", session="s")
    writer = sqlite3.connect(path / "loom.db", isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    read: list[str] = []

    def open_and_read() -> None:
        with loomdb.open(str(path)) as loom:
            read.append(loom.node("s").id)

    reader = threading.Thread(target=open_and_read, daemon=True)
    reader.start()
    reader.join(10)
    opened_meanwhile = list(read)
    writer.execute("ROLLBACK")
    writer.close()
    reader.join(60)
    assert opened_meanwhile == read and read, "the open waited for the writer"
