"""Store administration: copying a whole store between backends, backups."""

from __future__ import annotations

from typing import Any

import click

from . import JSON, argument, emit, loom
from . import root as app


@app.command()
@click.option("--from", "source", required=True,
              help="Store to copy from (folder, sqlite:///, postgresql://).")
@click.option("--to", "target", required=True,
              help="Store to copy into; must be empty unless --force.")
@click.option("--force", is_flag=True,
              help="Write into a store that already holds data: rows already there and "
              "equal are kept, rows that differ are an error.")
@click.option("--partitions", type=click.IntRange(0, 1024), default=0,
              help="PostgreSQL target: split the new store's per-tree tables into N hash "
              "partitions of the tree id.")
@JSON
def migrate(source: str, target: str, force: bool, partitions: int, as_json: bool) -> None:
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
@argument("dest", help="A new folder, or sqlite:///file.db.")
@JSON
@click.pass_context
def backup(ctx: click.Context, dest: str, as_json: bool) -> None:
    """Consistent online copy of a SQLite store (blobs included) while others write;
    the copy is verified. PostgreSQL: use pg_dump or `loomdb migrate`."""
    data = loom(ctx).backup(dest).to_json()
    emit(as_json, data, f"backed up {data['nodes']} nodes and {data['blobs']} blobs "
         f"to {data['dest']} — verified")
