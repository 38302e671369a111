"""Storage backends behind one interface (`base.Backend`), chosen by a path or URL.

    None                    the settings' store: $LOOMDB_URL, else $LOOMDB_HOME, else
                            ./.loomdb/ (as the edge that made the settings read them)
    a folder path           SQLite file `loom.db` plus `blobs/` inside that folder
    sqlite:///file.db       that SQLite file, blobs in `file.db.blobs/`
    ...?synchronous=full    (SQLite, URL or folder) sync the WAL at every commit;
                            default `normal`, or the settings' (an edge's
                            $LOOMDB_SQLITE_SYNCHRONOUS)
    postgresql://...        the PostgreSQL backend (extra `postgres`); loomdb's own
                            options: blobs=, replicas=H:P,... with max_lag_ms= and
                            replica_wait_ms= (replicas.py), partitions=N (partitions.py)
"""

from __future__ import annotations

from pathlib import Path

from .. import private
from ..blobs import BlobStore
from ..errors import InvalidInput
from ..settings import NONE, Settings
from .base import Backend

DB_FILE = "loom.db"


def open_store(target: str | Path | None = None,
               settings: Settings = NONE) -> tuple[Backend, BlobStore]:
    """Open the backend and blob store a path or URL names (creating a local folder);
    `settings` gives the default store and options a URL leaves out."""
    where = str(target) if target is not None else settings.location
    if where.startswith(("postgresql://", "postgres://")):
        from .postgres import open_postgres

        return open_postgres(where, settings)
    where, query = where.partition("?")[::2]
    synchronous = _synchronous(query, settings.sqlite_synchronous)
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


def _synchronous(query: str, default: str) -> str:
    """The SQLite durability level from a URL's query, else the settings'."""
    from urllib.parse import parse_qs

    params = parse_qs(query, keep_blank_values=True)
    unknown = sorted(set(params) - {"synchronous"})
    if unknown:
        raise InvalidInput("--db", f"unknown store option {unknown[0]!r} (known: synchronous)")
    value = params.get("synchronous", [default])
    return value[-1].lower()
