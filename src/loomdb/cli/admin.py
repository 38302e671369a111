"""Store administration: copying a whole store between backends, backups."""

from __future__ import annotations

import typer

from . import JSON, emit, loom
from . import root as app


@app.command()
def migrate(
    source: str = typer.Option(..., "--from", help="Store to copy from (folder, sqlite:///, postgresql://)."),
    target: str = typer.Option(..., "--to", help="Store to copy into; must be empty unless --force."),
    force: bool = typer.Option(False, "--force", help="Write into a store that already holds data."),
    partitions: int = typer.Option(0, "--partitions", min=0, max=1024, help="PostgreSQL target: split the new store's per-tree tables into N hash partitions of the tree id."),
    as_json: bool = JSON,
) -> None:
    """Copy a whole store (trees, refs and their logs, overlay, edges, blobs); the hash
    chain is verified at the target before the copy commits."""
    from ..api import copy_store

    report = copy_store(source, target, force=force, partitions=partitions)
    data = report.to_json()
    emit(as_json, data, ", ".join(f"{k} {v}" for k, v in data.items() if v and k != "kept")
         + " — verified at the target")


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
