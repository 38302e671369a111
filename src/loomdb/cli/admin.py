"""Store administration: copying a whole store between backends."""

from __future__ import annotations

import typer

from . import JSON, app, emit


@app.command()
def migrate(
    source: str = typer.Option(..., "--from", help="Store to copy from (folder, sqlite:///, postgresql://)."),
    target: str = typer.Option(..., "--to", help="Store to copy into; must be empty unless --force."),
    force: bool = typer.Option(False, "--force", help="Write into a store that already holds data."),
    as_json: bool = JSON,
) -> None:
    """Copy a whole store (trees, refs and their logs, overlay, edges, blobs); the hash
    chain is verified at the target before the copy commits."""
    from ..api import copy_store

    report = copy_store(source, target, force=force)
    data = report.to_json()
    emit(as_json, data, ", ".join(f"{k} {v}" for k, v in data.items() if v and k != "kept")
         + " — verified at the target")
