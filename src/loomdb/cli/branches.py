"""The git verbs beyond fork and edit: diff two paths, merge a branch back, replay a
path's turns onto another base or model (`loomdb.front.branches`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from . import JSON, argument, emit, loom, settings_of
from . import root as app
from .settings import providers_config

if TYPE_CHECKING:
    from ..front import Door

#: how each entry's status is marked in the readable diff
MARKS = {"same": "=", "changed": "~", "added": "+", "removed": "-"}


def door(ctx: click.Context) -> Door:
    """The operator's door, running models as `generate` does (providers.toml and the
    settings read from the environment)."""
    from ..front import Runtime

    lm = loom(ctx)
    return lm.as_(lm.operator, runtime=Runtime(config=providers_config(ctx),
                                                settings=settings_of(ctx)))


@app.command()
@argument("left", help="A headish: the path shown on the left.")
@argument("right", help="A headish: the path shown on the right.")
@JSON
@click.pass_context
def diff(ctx: click.Context, left: str, right: str, as_json: bool) -> None:
    """Compare two paths from their common ancestor, message by message: the text that
    differs line by line, tool calls by name and input."""
    found = door(ctx).branches.diff(left, right)
    emit(as_json, found, diff_text(found))


def diff_text(found: dict[str, Any]) -> str:
    """The readable diff: the ancestor, then a line per message after it (a text diff
    under a changed one)."""
    lines = [f"common ancestor: {found['ancestor'] or 'none'} "
             f"({found['common']} messages shared, {found['changed']} differ)"]
    for e in found["entries"]:
        side = e["left"] or e["right"]
        lines.append(f"{MARKS[e['status']]} {e['message']}\t{side['role']}\t"
                     f"{(e['left'] or {}).get('node', '-')}\t{(e['right'] or {}).get('node', '-')}")
        if e["status"] == "changed":
            lines += [f"    {line}" for line in e["text_diff"]]
            if e["tool_calls_differ"]:
                for name in ("left", "right"):
                    calls = ", ".join(f"{c['name']}({c['input']})" for c in e[name]["tool_calls"])
                    lines.append(f"    {name} tool calls: {calls or 'none'}")
        elif e["status"] in ("added", "removed"):
            lines.append(f"    {side['text'][:200]}")
    return "\n".join(lines)


@app.command()
@argument("branch", help="A headish: the branch whose outcome comes back.")
@argument("into", help="A headish: the line it comes back to (a session moves).")
@click.option("--summary", metavar="MODEL",
              help="Carry MODEL's summary of the branch since the common ancestor.")
@click.option("--text", help="Carry this text (what you concluded).")
@JSON
@click.pass_context
def merge(ctx: click.Context, branch: str, into: str, summary: str | None,
          text: str | None, as_json: bool) -> None:
    """Append to INTO a merge of BRANCH: a node whose sources are INTO's head and
    BRANCH's tip (so the context there holds the branch's last message), carrying a
    summary or your text if asked. Nothing is copied; merging again changes nothing."""
    if summary is not None and text is not None:
        from ..errors import InvalidInput

        raise InvalidInput("merge", "give --summary or --text, not both")
    node, wrote = door(ctx).branches.merge(branch, into, text=text, summary=summary)
    merged = (node.origin or {}).get("merged_from", {})
    emit(as_json, {"node": node.id, "tree": node.tree, "merged_from": merged,
                   "created": wrote},
         f"{node.id} merged from {merged.get('ref') or merged.get('node')}"
         + ("" if wrote else " (already merged)"))


@app.command()
@argument("path", help="A headish: the conversation whose user turns are replayed.")
@click.option("--onto", help="Where the replay starts (default: PATH's first message).")
@click.option("--session", required=True, help="Name of the new session.")
@click.option("-m", "--model", "models", multiple=True, help="Model or alias (repeatable).")
@click.option("-n", default=1, type=click.IntRange(min=1, max=64),
              help="Alternatives per model at each turn.")
@click.option("--max-tokens", type=click.IntRange(min=1, max=2**31 - 1))
@click.option("--no-generate", is_flag=True, help="Append the user turns only.")
@JSON
@click.pass_context
def replay(ctx: click.Context, path: str, onto: str | None, session: str,
           models: tuple[str, ...], n: int, max_tokens: int | None, no_generate: bool,
           as_json: bool) -> None:
    """Send PATH's user turns again, in order, onto --onto (after an edit, or on
    another model) as a new session, each answered before the next; then `loomdb
    diff PATH SESSION` compares."""
    done = door(ctx).branches.replay(path, session, onto=onto, models=list(models), n=n,
                                     max_tokens=max_tokens, generate=not no_generate)
    if done.stopped:
        click.echo(f"loomdb: warning: replay stopped: {done.stopped}", err=True)
    emit(as_json, done.to_json(),
         f"{session}: {len(done.turns)} turns replayed onto {done.onto}")
