"""The ForgetStore of a backend's dialect.

The choice lives above `forget` and its two implementations (which build on it), so the
base module never imports the dialects that import it.
"""

from __future__ import annotations

from .base import Backend
from .forget import ForgetStore
from .forget_postgres import PostgresForget
from .forget_sqlite import SQLiteForget


def for_backend(backend: Backend) -> ForgetStore:
    """The ForgetStore of a backend's dialect."""
    if backend.dialect == "postgres":
        return PostgresForget(backend)
    return SQLiteForget(backend)
