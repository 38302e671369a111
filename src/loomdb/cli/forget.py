"""Forgetting: delete, redact, and the record of both (docs/forget.md)."""

from __future__ import annotations

import click

from ..errors import InvalidInput
from ..model import SOURCES as SOURCE_NAMES
from . import JSON, emit, loom
from . import root as app


@app.command()
@click.argument("address")
@click.option("--force", is_flag=True, help="Also delete the refs at or below it (logged).")
@click.option("--reason", help="Why (kept in the record of forgetting).")
@click.option("--now", is_flag=True, help="tree:ID: purge it for good now, not to the trash.")
@click.option("--export-to", metavar="DIR", help="With --now: first write the tree "
              "there (native export, DIR/ID.json).")
@JSON
@click.pass_context
def delete(ctx: click.Context, address: str, force: bool, reason: str | None, now: bool,
           export_to: str | None, as_json: bool) -> None:
    """Delete a node and everything created from it, for real; or tree:ID whole, with
    its sessions and views, to the trash (`loomdb restore` brings it back; --now: for
    real)."""
    me = loom(ctx).forget
    if (now or export_to) and not address.startswith("tree:"):
        raise InvalidInput("--now" if now else "--export-to", "goes with tree:ID")
    if export_to is not None and not now:
        raise InvalidInput("--export-to", "goes with --now (a purge from the trash "
                           "exports with `loomdb gc --export-to`)")
    if address.startswith("tree:") and not now:
        put = me.trash_tree(address[len("tree:"):], reason=reason)
        emit(as_json, put, f"moved tree {put['id']} to the trash until {put['purge_after']}"
                           f" (`loomdb restore {put['id']}` brings it back)")
        return
    if address.startswith("tree:"):
        done = me.purge_tree(address[len("tree:"):], reason=reason, force=force,
                             export_to=export_to)
    else:
        done = me.delete(address, force=force, reason=reason)
    refs = f"; refs deleted: {', '.join(done.refs)}" if done.refs else ""
    emit(as_json, done.to_json(), f"deleted {len(done.ids)} node(s) in "
                                  f"{', '.join(done.trees)}{refs}")


@app.command()
@click.argument("headish", required=False)
@click.option("--reason", help="Why (kept in the record of forgetting).")
@click.option("--text", help="Erase this text (4-1000 characters) everywhere it was copied.")
@click.option("--pattern", metavar="REGEX", help="Erase every match of this regular "
              "expression (at most 1000 characters, a time budget).")
@click.option("--secret-type", metavar="KIND", help="Erase every secret of this kind the "
              "scanner knows (`loomdb secrets --policy` lists them).")
@click.option("--tree", help="With --text/--pattern/--secret-type: only this tree.")
@click.option("--yes", is_flag=True, help="With --text/--pattern/--secret-type: erase; "
              "without it, only show what would change per tree (a dry run).")
@JSON
@click.pass_context
def redact(ctx: click.Context, headish: str | None, reason: str | None, text: str | None,
           pattern: str | None, secret_type: str | None, tree: str | None, yes: bool,
           as_json: bool) -> None:
    """Erase a node's content everywhere it is stored (the node stays as a tombstone);
    or, with --text, --pattern or --secret-type, every span of it in every place it
    was copied, each replaced by a marker such as [redacted:text] (a dry run unless
    --yes)."""
    me = loom(ctx).forget
    if text is None and pattern is None and secret_type is None:
        if headish is None:
            raise InvalidInput("redact", "name a node, or give --text, --pattern or "
                               "--secret-type")
        if tree is not None or yes:
            raise InvalidInput("--tree" if tree is not None else "--yes",
                               "goes with --text, --pattern or --secret-type")
        done = me.redact(headish, reason=reason)
        shared = (f"; the same content was redacted in {', '.join(done.shared)}"
                  if done.shared else "")
        gens = f"; {len(done.generations)} generation record(s) erased" if done.generations else ""
        emit(as_json, done.to_json(), f"redacted {done.target}{shared}{gens}")
        return
    if headish is not None:
        raise InvalidInput("redact", "name a node or give --text/--pattern/--secret-type, "
                           "not both")
    spans = me.redact_spans(text=text, pattern=pattern, secret_type=secret_type, tree=tree,
                            dry_run=not yes, reason=reason)
    lines = [f"tree {t}: {c['occurrences']} span(s) in {c['nodes']} node(s), "
             f"{c['generations']} generation record(s), {c['titles']} title(s)"
             + (f"; {c['stale']} compaction summary(ies) made stale" if c["stale"] else "")
             for t, c in sorted(spans.trees.items())]
    if spans.areas:
        lines.append(f"documents and collections: {', '.join(spans.areas)}")
    if not spans.trees and not spans.areas:
        lines.append(f"nothing to redact ({spans.marker})")
    elif spans.dry_run:
        lines.append(f"dry run: nothing written; `--yes` replaces {spans.occurrences} span(s) "
                     f"by {spans.marker}")
    else:
        lines.append(f"replaced {spans.occurrences} span(s) by {spans.marker}"
                     + (f"; stale: `loomdb compact --redo` for {len(spans.stale)} summary(ies)"
                        if spans.stale else ""))
    emit(as_json, spans.to_json(), "\n".join(lines))


@app.command()
@click.option("--tree", help="Only the lines naming this tree id.")
@click.option("--limit", type=int, default=100, help="At most this many lines (1-1000).")
@JSON
@click.pass_context
def forgotten(ctx: click.Context, tree: str | None, limit: int, as_json: bool) -> None:
    """The record of forgetting, newest first: when, who, what, which ids, why."""
    lines = loom(ctx).forget.log(limit=limit, tree=tree)
    text = "\n".join(
        f"{e['seq']} {e['at']} {e['actor']} {e['action']} {e['target']}"
        f" ({len(e['ids'])} node(s){'; refs ' + ', '.join(e['refs']) if e['refs'] else ''})"
        f"{': ' + e['reason'] if e['reason'] else ''}" for e in lines)
    emit(as_json, lines, text or "nothing forgotten")


def _pairs(values: tuple[str, ...], option: str) -> dict[str, str]:
    out = {}
    for v in values:
        kind, sep, rest = v.partition("=")
        if not sep or not kind or not rest:
            raise InvalidInput(option, f"{v!r} is not KIND=VALUE")
        out[kind] = rest
    return out


@app.command()
@click.option("--tree", help="Only this tree's findings.")
@click.option("--limit", type=int, default=1000, help="At most this many (1-10000).")
@click.option("--set", "actions", multiple=True, metavar="KIND=ACTION",
              help="Set the policy for a kind (`all`: every kind not named): redact, "
                   "refuse, warn or off; then show the policy.")
@click.option("--rule", "rules", multiple=True, metavar="KIND=REGEX",
              help="Add an operator rule: the regex's whole match is a secret of KIND.")
@click.option("--source", type=click.Choice(SOURCE_NAMES),
              help="With --set: the policy for writes from this source only (import, "
                   "agent, human...), over the store's.")
@click.option("--policy", "show_policy", is_flag=True, help="Show the policy.")
@JSON
@click.pass_context
def secrets(ctx: click.Context, tree: str | None, limit: int, actions: tuple[str, ...],
            rules: tuple[str, ...], source: str | None, show_policy: bool,
            as_json: bool) -> None:
    """What the secrets scanner found as content came in: kind, node, place, what was
    done (never the secret); or the store's policy (docs/security.md)."""
    me = loom(ctx).forget
    if source and not actions:
        raise InvalidInput("--source", "goes with --set KIND=ACTION")
    if actions or rules or show_policy:
        kept = (me.set_secrets_policy(_pairs(actions, "--set"), _pairs(rules, "--rule"), source)
                if actions or rules else me.secrets_policy())
        kinds = ", ".join(f"{k}={v}" for k, v in sorted(kept["kinds"].items()))
        own = ", ".join(r["kind"] for r in kept["rules"])
        per = "; ".join(
            f"{s}: " + ", ".join([*([f"default={p['default']}"] if "default" in p else []),
                                  *(f"{k}={v}" for k, v in sorted(p.get("kinds", {}).items()))])
            for s, p in sorted(kept["sources"].items()))
        emit(as_json, kept, f"default: {kept['default']}" + (f"; {kinds}" if kinds else "")
             + (f"; operator rules: {own}" if own else "") + (f"; per source: {per}" if per else ""))
        return
    found = me.secrets(tree=tree, limit=limit)
    text = "\n".join(f"{f['at']} {f['action']} {f['kind']} in {f['item']} {f['place']}"
                     f"[{f['start']}:{f['end']}] (tree {f['tree']})" for f in found)
    emit(as_json, found, text or "no secrets found")


@app.command()
@JSON
@click.pass_context
def trash(ctx: click.Context, as_json: bool) -> None:
    """The trees in the trash, first purged first: when they go, by which rule."""
    lines = loom(ctx).forget.trash()
    text = "\n".join(
        f"{e['id']} {e['title']!r} ({e['nodes']} node(s)) trashed {e['trashed_at']} by "
        f"{e['rule']}; purged after {e['purge_after']}{' (held)' if e['held'] else ''}"
        for e in lines)
    emit(as_json, lines, text or "the trash is empty")


@app.command()
@click.argument("tree")
@JSON
@click.pass_context
def restore(ctx: click.Context, tree: str, as_json: bool) -> None:
    """Take a tree out of the trash: it lists and searches again, as it was."""
    done = loom(ctx).forget.restore(tree[len("tree:"):] if tree.startswith("tree:") else tree)
    emit(as_json, done, f"restored tree {done['id']}")


@app.command()
@click.argument("target", required=False)
@click.option("--remove", is_flag=True, help="Remove the hold instead.")
@click.option("--reason", help="Why (kept with the hold).")
@JSON
@click.pass_context
def hold(ctx: click.Context, target: str | None, remove: bool, reason: str | None,
         as_json: bool) -> None:
    """Hold a tree (tree:ID) or a session: retention never takes it and no purge does;
    without TARGET, list the holds."""
    me = loom(ctx).forget
    if target is None:
        if remove or reason:
            raise InvalidInput("TARGET", "is needed with --remove or --reason")
        found = me.holds()
        emit(as_json, found, "\n".join(f"{h['kind']} {h['name']} (tree {h['tree']}) since "
                                       f"{h['at']}{': ' + h['reason'] if h['reason'] else ''}"
                                       for h in found) or "no holds")
        return
    if remove:
        done = me.unhold(target)
        emit(as_json, done, f"removed the hold on {done['kind']} {done['name']}")
        return
    done = me.hold(target, reason=reason)
    emit(as_json, done, f"holding {done['kind']} {done['name']} (tree {done['tree']})")
