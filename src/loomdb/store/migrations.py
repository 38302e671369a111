"""Ordered, append-only schema migrations, shared in design by every backend.

Each backend keeps its scripts in `sql/<dialect>/NNNN_name.sql`; the name is recorded
in the `loomdb_migrations` table when applied, inside the same transaction as the
script, so running the migrations twice (or from two processes at once) applies each
script exactly once. Scripts are never edited after they ship: change the schema by
adding the next script.
"""

from __future__ import annotations

import os

#: the scripts ship as files of this package (read directly: every open checks them)
_FOLDER = os.path.join(os.path.dirname(__file__), "sql")


def names(dialect: str) -> list[str]:
    """The name of every migration of a dialect, in order (nothing read but the folder)."""
    found = os.listdir(os.path.join(_FOLDER, dialect))
    return sorted(n[: -len(".sql")] for n in found if n.endswith(".sql"))


def scripts(dialect: str) -> list[tuple[str, str]]:
    """(name, sql) of every migration of a dialect, in order."""
    folder = os.path.join(_FOLDER, dialect)
    out = []
    for name in names(dialect):
        with open(os.path.join(folder, f"{name}.sql"), encoding="utf-8") as fh:
            out.append((name, fh.read()))
    return out


def statements(sql: str, complete) -> list[str]:  # type: ignore[no-untyped-def]
    """Split a script into statements with the dialect's own completeness test."""
    out: list[str] = []
    buf = ""
    for line in sql.splitlines(keepends=True):
        if not buf and (not line.strip() or line.lstrip().startswith("--")):
            continue
        buf += line
        if complete(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out
