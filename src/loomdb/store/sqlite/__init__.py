"""The SQLite backend, as a package: `connections` (the runner: one connection per
thread, transactions), one module per area whose SQL is SQLite's own (`nodes`,
`edges`, `refs`, `forget`), and `backend`, which composes them with the shared stores."""

from .backend import SQLiteBackend
from .connections import SYNCHRONOUS, WAL_LIMIT
from .nodes import POS_BITS, POS_MASK

__all__ = ["POS_BITS", "POS_MASK", "SYNCHRONOUS", "WAL_LIMIT", "SQLiteBackend"]
