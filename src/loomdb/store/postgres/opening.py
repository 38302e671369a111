"""Opening a PostgreSQL store by URL: loomdb's own options split off, blobs placed.

Blobs live at the URL's `blobs=` (any fsspec URL), else the settings' (an edge's
$LOOMDB_BLOBS), else
./.loomdb-blobs (see `open_postgres`).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from ...blobs import BlobStore
from ...settings import NONE, Settings
from .. import partitions
from ..replicas import OPTIONS as REPLICA_OPTIONS
from ..replicas import parse_options
from .backend import PostgresBackend

DEFAULT_BLOBS = ".loomdb-blobs"
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def split_url(url: str) -> tuple[str, str | None]:
    """(connection URL without loomdb's own options, the blob location it named or
    None). The other parameters are passed to libpq byte for byte (libpq does not read
    `+` as a space)."""
    conninfo, ours = split_options(url)
    return conninfo, ours.get("blobs")


def split_options(url: str) -> tuple[str, dict[str, str]]:
    """(connection URL for libpq, loomdb's options: `blobs` and the replica settings)."""
    parts = urlsplit(url)
    kept, ours = [], {}
    for item in parts.query.split("&") if parts.query else []:
        key, _, value = item.partition("=")
        if unquote(key) in ("blobs", "partitions", *REPLICA_OPTIONS):
            ours[unquote(key)] = unquote(value)
        else:
            kept.append(item)
    return urlunsplit(parts._replace(query="&".join(kept))), ours


def blob_store(location: str) -> Any:
    """A local folder (path or file:// URL) -> BlobStore; any other fsspec URL ->
    objectstore.ObjectBlobStore (extra `objectstore`)."""
    if location.startswith("file://"):
        return BlobStore(location[len("file://"):])
    if not _SCHEME.match(location):
        return BlobStore(location)
    from ...objectstore import ObjectBlobStore

    return ObjectBlobStore(location)



def open_postgres(url: str, settings: Settings = NONE) -> tuple[PostgresBackend, Any]:
    """Open a PostgreSQL store: `postgresql://user@host/db?blobs=<fsspec URL>`.

    Blobs go to the URL's `blobs=` (stripped before connecting), else the settings'
    `blobs` ($LOOMDB_BLOBS at an edge), else the local folder ./.loomdb-blobs."""
    conninfo, ours = split_options(url)
    if conninfo.startswith("postgres://"):
        conninfo = "postgresql://" + conninfo[len("postgres://"):]
    replicas = parse_options(ours)
    split = partitions.parse(ours.get("partitions"))
    location = ours.get("blobs") or settings.blobs or DEFAULT_BLOBS
    store = blob_store(location)
    return PostgresBackend(url, conninfo=conninfo, replicas=replicas, partitions=split), store
