"""Forgetting: delete, redact, and the record of both (docs/forget.md)."""

from __future__ import annotations

import click

from ..errors import InvalidInput
from . import JSON, emit, loom
from . import root as app


@app.command()
@click.argument("address")
@click.option("--force", is_flag=True, help="Also delete the refs at or below it (logged).")
@click.option("--reason", help="Why (kept in the record of forgetting).")
@JSON
@click.pass_context
def delete(ctx: click.Context, address: str, force: bool, reason: str | None,
           as_json: bool) -> None:
    """Delete a node and everything created from it, or tree:ID, for real."""
    done = loom(ctx).forget.delete(address, force=force, reason=reason)
    refs = f"; refs deleted: {', '.join(done.refs)}" if done.refs else ""
    emit(as_json, done.to_json(), f"deleted {len(done.ids)} node(s) in "
                                  f"{', '.join(done.trees)}{refs}")


@app.command()
@click.argument("headish")
@click.option("--reason", help="Why (kept in the record of forgetting).")
@JSON
@click.pass_context
def redact(ctx: click.Context, headish: str, reason: str | None, as_json: bool) -> None:
    """Erase a node's content everywhere it is stored; the node stays as a tombstone."""
    done = loom(ctx).forget.redact(headish, reason=reason)
    shared = (f"; the same content was redacted in {', '.join(done.shared)}"
              if done.shared else "")
    gens = f"; {len(done.generations)} generation record(s) erased" if done.generations else ""
    emit(as_json, done.to_json(), f"redacted {done.target}{shared}{gens}")


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
@click.option("--policy", "show_policy", is_flag=True, help="Show the policy.")
@JSON
@click.pass_context
def secrets(ctx: click.Context, tree: str | None, limit: int, actions: tuple[str, ...],
            rules: tuple[str, ...], show_policy: bool, as_json: bool) -> None:
    """What the secrets scanner found as content came in: kind, node, place, what was
    done (never the secret); or the store's policy (docs/security.md)."""
    me = loom(ctx).forget
    if actions or rules or show_policy:
        kept = (me.set_secrets_policy(_pairs(actions, "--set"), _pairs(rules, "--rule"))
                if actions or rules else me.secrets_policy())
        kinds = ", ".join(f"{k}={v}" for k, v in sorted(kept["kinds"].items()))
        own = ", ".join(r["kind"] for r in kept["rules"])
        emit(as_json, kept, f"default: {kept['default']}" + (f"; {kinds}" if kinds else "")
             + (f"; operator rules: {own}" if own else ""))
        return
    found = me.secrets(tree=tree, limit=limit)
    text = "\n".join(f"{f['at']} {f['action']} {f['kind']} in {f['item']} {f['place']}"
                     f"[{f['start']}:{f['end']}] (tree {f['tree']})" for f in found)
    emit(as_json, found, text or "no secrets found")
