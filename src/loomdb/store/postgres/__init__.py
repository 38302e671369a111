"""The PostgreSQL backend, as a package: `connections` (the runner: a pool, the read
and write seams, transactions), one module per area whose SQL is PostgreSQL's own
(`nodes`, `edges`, `refs`, `forget`), `backend`, which composes them with the shared
stores, and `opening` (a store by URL)."""

from .backend import PostgresBackend
from .connections import TransientConflict, unavailable
from .nodes import HOT_QUERIES
from .opening import DEFAULT_BLOBS, blob_store, open_postgres, split_options, split_url

__all__ = ["DEFAULT_BLOBS", "HOT_QUERIES", "PostgresBackend", "TransientConflict",
           "blob_store", "open_postgres", "split_options", "split_url", "unavailable"]
