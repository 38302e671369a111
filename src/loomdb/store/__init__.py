"""Storage backends behind one interface (`base.Backend`), chosen by a path or URL.

    None                    $LOOMDB_URL, else $LOOMDB_HOME, else ./.loomdb/
    a folder path           SQLite file `loom.db` plus `blobs/` inside that folder
    sqlite:///file.db       that SQLite file, blobs in `file.db.blobs/`
    ...?synchronous=full    (SQLite, URL or folder) sync the WAL at every commit;
                            default `normal`, or $LOOMDB_SQLITE_SYNCHRONOUS
    postgresql://...        the PostgreSQL backend (extra `postgres`); loomdb's own
                            options: blobs=, replicas=H:P,... with max_lag_ms= and
                            replica_wait_ms= (replicas.py), partitions=N (partitions.py)
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import private
from ..blobs import BlobStore
from ..errors import InvalidInput
from .base import Backend

DB_FILE = "loom.db"


def default_location() -> str:
    return os.environ.get("LOOMDB_URL") or os.environ.get("LOOMDB_HOME") or ".loomdb"


def open_store(target: str | Path | None = None) -> tuple[Backend, BlobStore]:
    """Open the backend and blob store a path or URL names (creating a local folder)."""
    where = str(target) if target is not None else default_location()
    if where.startswith(("postgresql://", "postgres://")):
        from .postgres import open_postgres

        return open_postgres(where)
    where, query = where.partition("?")[::2]
    synchronous = _synchronous(query)
    if where.startswith("sqlite:///"):
        file = Path(where[len("sqlite:///"):])
        blobs = file.with_name(file.name + ".blobs")
    elif "://" in where:
        raise InvalidInput("--db", f"unsupported store URL {where!r} (sqlite:/// or postgresql://)")
    else:
        folder = Path(where)
        if folder.exists() and not folder.is_dir():
            raise InvalidInput("--db", f"{where} is a file; give a folder or sqlite:///{where}")
        private.folder(folder)
        file, blobs = folder / DB_FILE, folder / "blobs"
    file.parent.mkdir(parents=True, exist_ok=True)
    private.database(file)
    from .sqlite import SQLiteBackend

    return SQLiteBackend(file, synchronous=synchronous), BlobStore(blobs)


def _synchronous(query: str) -> str:
    """The SQLite durability level from a URL's query, else the environment."""
    from urllib.parse import parse_qs

    params = parse_qs(query, keep_blank_values=True)
    unknown = sorted(set(params) - {"synchronous"})
    if unknown:
        raise InvalidInput("--db", f"unknown store option {unknown[0]!r} (known: synchronous)")
    value = params.get("synchronous", [os.environ.get("LOOMDB_SQLITE_SYNCHRONOUS", "normal")])
    return value[-1].lower()
