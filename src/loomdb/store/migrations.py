"""Ordered, append-only schema migrations, shared in design by every backend.

Each backend keeps its scripts in `sql/<dialect>/NNNN_name.sql`; the name is recorded
in the `loomdb_migrations` table when applied, inside the same transaction as the
script, so running the migrations twice (or from two processes at once) applies each
script exactly once. Scripts are never edited after they ship: change the schema by
adding the next script.
"""

from __future__ import annotations

from importlib import resources


def scripts(dialect: str) -> list[tuple[str, str]]:
    """(name, sql) of every migration of a dialect, in order."""
    folder = resources.files("loomdb.store") / "sql" / dialect
    found = sorted(p.name for p in folder.iterdir() if p.name.endswith(".sql"))
    return [(name[: -len(".sql")], (folder / name).read_text("utf-8")) for name in found]


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
