"""Values a database cannot hold, refused where they meet the database: one check for
every column of every table, core and areas alike.

A string that is not valid Unicode (a lone surrogate: from invalid UTF-8 decoded with
`surrogateescape`, or a JSON `"\\ud800"` escape) cannot be encoded for either
database; PostgreSQL's text columns cannot hold a NUL character (SQLite's can, so there
it is kept); and neither holds a whole number over 64 bits. The drivers raise their own
errors for these, deep inside a statement; each backend hands them here, once, where
statements run, and the caller gets an `InvalidInput` naming the table the value was
meant for (on SQLite). The statement's transaction rolls back, so nothing is written.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from typing import Any

from ..errors import InvalidInput

_TABLE = re.compile(r"\b(?:INTO|UPDATE|FROM)\s+([A-Za-z_][A-Za-z0-9_]*)", re.IGNORECASE)


def unstorable(exc: BaseException, sql: str = "") -> InvalidInput | None:
    """The InvalidInput a driver error about unstorable text stands for; None for any
    other error."""
    if isinstance(exc, UnicodeEncodeError):
        why = "text is not valid Unicode (a lone surrogate, as invalid UTF-8 decodes to)"
    elif type(exc).__name__ == "DataError" and "NUL" in str(exc):
        why = "text contains a NUL character (\\x00), which PostgreSQL cannot store"
    elif isinstance(exc, OverflowError) or type(exc).__name__ == "NumericValueOutOfRange":
        why = "a number is too large to store (at most 2**63 - 1)"
    else:
        return None
    found = _TABLE.search(sql)
    return InvalidInput(found.group(1) if found else "stored value", why)


class CheckedConnection(sqlite3.Connection):
    """A SQLite connection whose statements refuse unstorable text as InvalidInput (the
    driver raises UnicodeEncodeError while binding). Only a failing call pays."""

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        try:
            return super().execute(sql, parameters)
        except (UnicodeEncodeError, OverflowError) as exc:
            raise unstorable(exc, sql) from None  # type: ignore[misc]

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        try:
            return super().executemany(sql, parameters)
        except (UnicodeEncodeError, OverflowError) as exc:
            raise unstorable(exc, sql) from None  # type: ignore[misc]


__all__ = ["CheckedConnection", "unstorable"]
