"""The gc command: remove contents and blobs nothing reachable uses; with
`--older-than` (or the store's default retention), delete whole trees not touched
since (docs/forget.md)."""

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
@click.option("--older-than", help="Also delete whole trees not touched for this long "
              "(90d, 12h, 30s), as `delete tree:ID --force` does.")
@click.option("--tree", help="With --older-than: only this tree id.")
@click.option("--retention", help="Keep DURATION as the store's default --older-than "
              "(`off` clears it), then stop.")
@JSON
@click.pass_context
def gc(ctx: click.Context, dry_run: bool, grace: float | None, older_than: str | None,
       tree: str | None, retention: str | None, as_json: bool) -> None:
    """Delete unreachable contents and blobs: {contents, blobs, bytes}; and with
    --older-than (or a kept default), trees not touched since."""
    from ..front.forget import DEFAULT_GRACE, MAX_GRACE

    me = loom(ctx).gc
    if retention is not None:
        kept = me.set_retention(retention)
        emit(as_json, {"retention": kept}, f"retention: {kept or 'off'}")
        return
    if tree is not None and older_than is None:
        raise InvalidInput("--tree", "goes with --older-than")
    if grace is None:
        grace = DEFAULT_GRACE.total_seconds()
    if not 0 <= grace <= MAX_GRACE.total_seconds():  # (also refuses nan), before any sweep
        raise InvalidInput("--grace", f"must be from 0 to {MAX_GRACE.total_seconds():.0f} "
                           f"seconds, got {grace!r}")
    older_than = older_than or me.retention()
    swept = me.sweep(older_than, tree=tree, dry_run=dry_run) if older_than else None
    out: dict[str, object] = dict(me.collect(dry_run=dry_run, grace=timedelta(seconds=grace)))
    verb = "would free" if dry_run else "freed"
    text = f"{verb} {out['contents']} contents, {out['blobs']} blobs, {out['bytes']} bytes"
    if swept is not None:
        out["retention"] = swept
        n = len(swept["trees"])
        text = (f"{'would delete' if dry_run else 'deleted'} {n} tree(s) not touched since "
                f"{swept['cutoff']}; " + text)
    emit(as_json, out, text)
