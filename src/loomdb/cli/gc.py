"""The gc command: remove contents and blobs nothing reachable uses."""

from __future__ import annotations

from datetime import timedelta

import click

from ..errors import InvalidInput
from . import JSON, emit, loom
from . import root as app


@app.command()
@click.option("--dry-run", is_flag=True, help="Count, delete nothing.")
@click.option("--grace", type=float, help="Seconds: anything newer is kept "
              "(writers in flight); default an hour.")
@JSON
@click.pass_context
def gc(ctx: click.Context, dry_run: bool, grace: float | None, as_json: bool) -> None:
    """Delete unreachable contents and blobs: {contents, blobs, bytes}."""
    from ..gc import service as G

    if grace is None:
        grace = G.DEFAULT_GRACE.total_seconds()
    if grace < 0:
        raise InvalidInput("--grace", "must be zero or more seconds")
    out = G.collect(loom(ctx), dry_run=dry_run, grace=timedelta(seconds=grace))
    verb = "would free" if dry_run else "freed"
    emit(as_json, out, f"{verb} {out['contents']} contents, {out['blobs']} blobs, "
                       f"{out['bytes']} bytes")
