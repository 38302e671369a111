"""The gc command: remove contents and blobs nothing reachable uses."""

from __future__ import annotations

from datetime import timedelta

import typer

from ..errors import InvalidInput
from . import JSON, emit, loom
from . import root as app


@app.command()
def gc(ctx: typer.Context,
       dry_run: bool = typer.Option(False, "--dry-run", help="Count, delete nothing."),
       grace: float = typer.Option(None, "--grace", help="Seconds: anything newer is kept "
                                   "(writers in flight); default an hour."),
       as_json: bool = JSON) -> None:
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
