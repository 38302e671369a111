"""Online backup of a SQLite store: a consistent copy while writers keep writing.

The database is copied with SQLite's backup API in one step, from a connection of its
own: that step reads one snapshot (WAL readers never block writers, and writers never
change what a reader sees), so the copy holds every transaction committed before it
and nothing of any later one. Blobs are copied after: a blob file is always written
before the node that points at it commits, and blob files never change (they are named
by their hash), so every blob the snapshot references is there to copy. Each blob is
hashed again on the way; the copy is written under a temporary name and renamed into
place, so a backup cut short leaves no database at DEST. The copy is then opened and
verified, so `backup` succeeding means DEST opens and `verify` passes.

PostgreSQL stores are backed up with the server's tools (`pg_dump`) or copied with
`loomdb migrate`; see docs/postgres.md.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import private
from .blobs import BlobStore
from .content import HASH_PREFIX
from .errors import IntegrityError, InvalidInput

if TYPE_CHECKING:
    from .loom import Loom


@dataclass
class BackupReport:
    dest: str
    bytes: int
    blobs: int
    nodes: int

    def to_json(self) -> dict[str, Any]:
        return {"dest": self.dest, "bytes": self.bytes, "blobs": self.blobs,
                "nodes": self.nodes, "verified": True}


def backup(loom: Loom, dest: str | Path) -> BackupReport:
    """Copy the store `loom` has open to `dest` (a new folder, or `sqlite:///file.db`)."""
    from .store.sqlite import SQLiteBackend

    backend = loom.backend
    if not isinstance(backend, SQLiteBackend) or not isinstance(loom.blobs, BlobStore):
        raise InvalidInput("backup", "only SQLite stores are backed up this way; for "
                           "PostgreSQL use pg_dump or `loomdb migrate` (docs/postgres.md)")
    file, blob_dir = _target(str(dest))
    _copy_database(backend.path, file)
    count = _copy_blobs(loom.blobs, BlobStore(blob_dir))
    return BackupReport(str(dest), file.stat().st_size, count, _verify(type(loom), str(dest)))


def _target(dest: str) -> tuple[Path, Path]:
    """The database file and blob folder a destination names; it must not hold a store."""
    from .store import DB_FILE

    if dest.startswith("sqlite:///"):
        file = Path(dest[len("sqlite:///"):])
        blobs = file.with_name(file.name + ".blobs")
    elif "://" in dest:
        raise InvalidInput("DEST", f"a backup goes to a folder or sqlite:///file, not {dest!r}")
    else:
        folder = Path(dest)
        if folder.exists() and not folder.is_dir():
            raise InvalidInput("DEST", f"{dest} is a file; give a new folder or sqlite:///{dest}")
        file, blobs = folder / DB_FILE, folder / "blobs"
    if file.exists():
        raise InvalidInput("DEST", f"{file} already exists; back up into a new place")
    if dest.startswith("sqlite:///"):
        file.parent.mkdir(parents=True, exist_ok=True)
    else:
        private.folder(file.parent)  # the backup's own folder: its owner's alone
    return file, blobs


def _copy_database(source: Path, file: Path) -> None:
    """One-step backup from a fresh connection: one consistent snapshot."""
    tmp = file.with_name(f".{file.name}.partial")
    tmp.unlink(missing_ok=True)
    private.file(tmp)  # 0600 before SQLite writes it (it keeps a file's mode)
    src = sqlite3.connect(str(source), timeout=60)
    try:
        dst = sqlite3.connect(str(tmp))
        try:
            src.backup(dst)
            dst.execute("PRAGMA journal_mode=WAL")
            dst.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            dst.close()
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        src.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{tmp}{suffix}").unlink(missing_ok=True)
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, file)


def _copy_blobs(src: BlobStore, dst: BlobStore) -> int:
    """Every blob file of the source, hashed again on the way (a bad one stops the copy)."""
    count = 0
    if not src.root.is_dir():
        return 0
    for path in sorted(src.root.glob("??/??/*")):
        if path.name.startswith(".tmp-"):
            continue
        bid = HASH_PREFIX + path.name
        try:
            data = src.get(bid)
        except IntegrityError as exc:
            raise IntegrityError(f"blob {bid} (not backed up)", exc.expected, exc.got) from None
        except InvalidInput:
            continue  # not a blob file (a stray name in the folder)
        dst.put(data)
        count += 1
    return count


def _verify(kind: type[Loom], dest: str) -> int:
    """Open the copy as a store (with the same kind of Loom as the original, so this
    module needs none of its own) and check its chain; returns the nodes checked."""
    with kind.open(dest) as copy:
        report = copy.verify()
    if not report.ok:
        first = report.broken[0]
        raise IntegrityError(f"backup at {dest}: {first['reason']}", "a verified copy",
                             f"{len(report.broken)} broken item(s)")
    return int(report.checked)
