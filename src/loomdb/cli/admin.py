"""Store administration: copying a whole store between backends, backups."""

from __future__ import annotations

from typing import Any

import typer

from . import JSON, emit, loom
from . import root as app


@app.command()
def migrate(
    source: str = typer.Option(..., "--from", help="Store to copy from (folder, sqlite:///, postgresql://)."),
    target: str = typer.Option(..., "--to", help="Store to copy into; must be empty unless --force."),
    force: bool = typer.Option(False, "--force", help="Write into a store that already holds data: rows already there and equal are kept, rows that differ are an error."),
    partitions: int = typer.Option(0, "--partitions", min=0, max=1024, help="PostgreSQL target: split the new store's per-tree tables into N hash partitions of the tree id."),
    as_json: bool = JSON,
) -> None:
    """Copy a whole store (trees, refs and their logs, overlay, edges, blobs, and the
    rows of every area: documents, collections, references, users, agents...) in one
    transaction; the search index is rebuilt at the target and the hash chain verified
    there before the copy commits."""
    from ..api import copy_store

    report = copy_store(source, target, force=force, partitions=partitions)
    data = report.to_json()
    emit(as_json, data, _summary(data))


def _summary(data: dict[str, Any]) -> str:
    """One line: core counts, rows per area, what was rebuilt."""
    parts = [f"{k} {v}" for k, v in data.items() if v and isinstance(v, int)]
    parts += [f"{area} {sum(tables.values())} rows" for area, tables in data["areas"].items()]
    parts += [f"{area} rebuilt ({', '.join(f'{k} {v}' for k, v in done.items())})"
              for area, done in data["rebuilt"].items()]
    return ", ".join(parts) + " — verified at the target"


@app.command()
def backup(
    ctx: typer.Context,
    dest: str = typer.Argument(..., help="A new folder, or sqlite:///file.db."),
    as_json: bool = JSON,
) -> None:
    """Consistent online copy of a SQLite store (blobs included) while others write;
    the copy is verified. PostgreSQL: use pg_dump or `loomdb migrate`."""
    data = loom(ctx).backup(dest).to_json()
    emit(as_json, data, f"backed up {data['nodes']} nodes and {data['blobs']} blobs "
         f"to {data['dest']} — verified")
