"""SQLite durability settings and the WAL's size on disk (issue 11, item 12)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import loomdb
from loomdb import InvalidInput


def level(loom: loomdb.Loom) -> int:
    return int(loom.backend.execute("PRAGMA synchronous")[0][0])


class TestSynchronous:
    def test_normal_is_the_default(self, tmp_path: Path) -> None:
        with loomdb.open(str(tmp_path / "s")) as loom:
            assert level(loom) == 1  # NORMAL

    def test_full_is_chosen_in_the_url(self, tmp_path: Path) -> None:
        with loomdb.open(f"sqlite:///{tmp_path / 'f.db'}?synchronous=full") as loom:
            assert level(loom) == 2  # FULL
            loom.new_tree("hi", session="main")
        with loomdb.open(f"sqlite:///{tmp_path / 'f.db'}") as loom:
            assert [t.title for t in loom.trees()] == ["hi"]

    def test_full_is_chosen_in_the_environment(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        monkeypatch.setenv("LOOMDB_SQLITE_SYNCHRONOUS", "full")
        with loomdb.open(str(tmp_path / "e")) as loom:
            assert level(loom) == 2

    @pytest.mark.parametrize("query", ["synchronous=off", "synchronus=full"])
    def test_an_unknown_level_or_option_is_refused(self, tmp_path: Path, query: str) -> None:
        with pytest.raises(InvalidInput):
            loomdb.open(f"sqlite:///{tmp_path / 'x.db'}?{query}")


class TestWal:
    def test_the_wal_of_a_1000_turn_store_is_small_after_close(self, tmp_path: Path) -> None:
        """Another process has the store open (a server, a chat in another terminal), so
        closing is not the last close and SQLite would leave the WAL as it is."""
        file = tmp_path / "w.db"
        loom = loomdb.open(f"sqlite:///{file}")
        other = sqlite3.connect(file)
        other.execute("SELECT count(*) FROM nodes").fetchall()
        loom.new_tree("start", session="main")
        text = "a turn of a conversation, long enough to dirty pages. " * 20
        for i in range(1000):
            loom.append("main", f"{i} {text}", role="assistant" if i % 2 else "user")
        wal = Path(f"{file}-wal")
        assert wal.stat().st_size > 1_000_000  # the WAL did grow while writing
        loom.close()
        assert wal.stat().st_size < 64 * 1024
        assert other.execute("SELECT count(*) FROM nodes").fetchone()[0] == 1001
        other.close()

    def test_after_a_checkpoint_the_wal_is_cut_back_to_its_limit(self, tmp_path: Path) -> None:
        from loomdb.store.sqlite import WAL_LIMIT

        file = tmp_path / "l.db"
        with loomdb.open(f"sqlite:///{file}") as loom:
            loom.new_tree("start", session="main")
            other = sqlite3.connect(file)  # a reader that stays open: close cannot truncate
            other.execute("SELECT 1").fetchall()
            with loom.backend.transaction():
                for i in range(2000):
                    loom.append("main", f"{i} " + "x" * 2000)
            loom.backend.execute("PRAGMA wal_checkpoint(PASSIVE)")
            loom.append("main", "one more")  # restarts the WAL, truncated to the limit
            assert Path(f"{file}-wal").stat().st_size <= WAL_LIMIT
            other.close()
