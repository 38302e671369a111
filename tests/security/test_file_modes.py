"""The store's files are not readable by other accounts (issue 22, item 12): folders
0700, files 0600, whatever the umask, for a fresh store (a folder or a sqlite:/// file),
its WAL files while it is open, its blobs (both backends), exports and backups; and an
existing store with looser modes is tightened when its owner opens it."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import loomdb
from loomdb.store import DB_FILE


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def loose(root: Path) -> list[str]:
    """Every path under `root` (itself included) that anyone but its owner may use."""
    found = [root, *root.rglob("*")]
    return [f"{oct(mode(p))} {p}" for p in found if mode(p) & 0o077]


@pytest.fixture
def open_umask() -> Iterator[None]:
    """A permissive umask, as many shells and containers have (022 or 0)."""
    old = os.umask(0o000)
    try:
        yield
    finally:
        os.umask(old)


def _use(lm: loomdb.Loom) -> str:
    ref = lm.put_blob(b"\x89PNG private picture", "image/png")
    lm.new_tree([{"type": "image", "ref": ref, "mime_type": "image/png"}], session="main")
    lm.append("main", "more words")
    return ref


@pytest.mark.usefixtures("open_umask")
def test_a_fresh_folder_store_is_private_while_open_and_after(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    with loomdb.open(str(folder)) as lm:
        _use(lm)
        wal = [folder / f"{DB_FILE}-wal", folder / f"{DB_FILE}-shm"]
        assert all(p.exists() for p in wal)  # the WAL files exist while the store is open
        assert loose(folder) == []
        assert mode(folder) == 0o700 and mode(folder / DB_FILE) == 0o600
    assert loose(folder) == []


@pytest.mark.usefixtures("open_umask")
def test_a_sqlite_url_store_is_private_and_its_folder_untouched(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)
    with loomdb.open(f"sqlite:///{shared / 'mine.db'}") as lm:
        _use(lm)
        assert loose(shared / "mine.db.blobs") == []
        for name in ("mine.db", "mine.db-wal", "mine.db-shm"):
            assert mode(shared / name) == 0o600, name
    assert mode(shared) == 0o755  # the folder the user chose is theirs to set


@pytest.mark.usefixtures("open_umask")
def test_blobs_exports_and_backups_are_private(store_url: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with loomdb.open(store_url) as lm:
        _use(lm)
        if store_url.startswith("postgres"):
            blobs = Path(store_url.split("blobs=file://")[1])
        else:
            blobs = Path(store_url) / "blobs"
            lm.backup(str(out / "backup"))
            assert loose(out / "backup") == []
        assert loose(blobs) == []
        lm.export_file(out / "export.json", target="main")
        assert mode(out / "export.json") == 0o600


def test_an_existing_loose_store_is_tightened_on_open(tmp_path: Path) -> None:
    folder = tmp_path / "old"
    with loomdb.open(str(folder)) as lm:
        _use(lm)
    for path in [folder, *folder.rglob("*")]:  # as an older version (umask 022) left it
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    run = subprocess.run([sys.executable, "-m", "loomdb", "--db", str(folder), "log", "main"],
                         env=env, capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    assert mode(folder) == 0o700 and mode(folder / DB_FILE) == 0o600
    assert mode(folder / "blobs") == 0o700  # which closes every blob under it
