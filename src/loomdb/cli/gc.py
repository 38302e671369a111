"""The gc command: remove contents and blobs nothing reachable uses; with
`--older-than` (or the store's default retention), move whole trees not touched since
to the trash; and purge what the trash kept past its grace period (docs/forget.md)."""

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
@click.option("--older-than", help="Also move whole trees not touched for this long "
              "(90d, 12h, 30s) to the trash, but for held ones (`loomdb hold`).")
@click.option("--tree", help="With --older-than: only this tree id.")
@click.option("--retention", help="Keep DURATION as the store's default --older-than "
              "(`off` clears it), then stop.")
@click.option("--trash-for", help="Keep DURATION as the trash's grace period (default "
              "30d; 0s: purge on the next gc), then stop.")
@click.option("--export-to", metavar="DIR", help="Write each tree a purge takes there "
              "first (native export, DIR/ID.json).")
@JSON
@click.pass_context
def gc(ctx: click.Context, dry_run: bool, grace: float | None, older_than: str | None,
       tree: str | None, retention: str | None, trash_for: str | None,
       export_to: str | None, as_json: bool) -> None:
    """Delete unreachable contents and blobs: {contents, blobs, bytes}; with
    --older-than (or a kept default), move trees not touched since to the trash; purge
    the trees whose time in the trash is over."""
    from ..front.forget import DEFAULT_GRACE, MAX_GRACE

    me = loom(ctx).gc
    if retention is not None:
        kept = me.set_retention(retention)
        if kept is None:
            emit(as_json, {"retention": kept}, "retention: off")
            return
        plan = me.sweep(kept, dry_run=True)  # what its first run will do, said now
        n, held = len(plan["trees"]), len(plan["held"])
        emit(as_json, {"retention": kept, "will_trash": n, "held": held},
             f"retention: {kept}; the next gc moves {n} tree(s) not touched since "
             f"{plan['cutoff']} to the trash for {plan['keep_for']}"
             f"{f' ({held} held, kept)' if held else ''}; `gc --dry-run` lists them")
        return
    if trash_for is not None:
        kept = me.set_trash_for(trash_for)
        emit(as_json, {"trash_for": kept}, f"the trash keeps a tree for {kept}")
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
    purged = me.purge(dry_run=dry_run, export_to=export_to)
    out: dict[str, object] = dict(me.collect(dry_run=dry_run, grace=timedelta(seconds=grace)))
    verb = "would free" if dry_run else "freed"
    text = f"{verb} {out['contents']} contents, {out['blobs']} blobs, {out['bytes']} bytes"
    out["purged"] = purged
    if purged:
        text = (f"{'would purge' if dry_run else 'purged'} {len(purged)} tree(s) from the "
                f"trash{' (exported to ' + export_to + ')' if export_to else ''}; " + text)
    if swept is not None:
        out["retention"] = swept
        n = len(swept["trees"])
        kept_by = f" ({len(swept['held'])} held, kept)" if swept["held"] else ""
        text = (f"{'would move' if dry_run else 'moved'} {n} tree(s) not touched since "
                f"{swept['cutoff']} to the trash for {swept['keep_for']}{kept_by}; " + text)
    emit(as_json, out, text)
