"""Commands that write nodes: new, add, edit, select, link, and the overlay flags."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from ..errors import InvalidInput, UsageError
from . import JSON, emit, loom
from . import root as app


def _content(ctx: typer.Context, text: str | None, file: Path | None, content_json: str | None) -> Any:
    given = [x for x in (text, file, content_json) if x is not None]
    if len(given) != 1:
        raise InvalidInput("content", "give exactly one of --text, --file, --content-json")
    if text is not None:
        return text
    if file is not None:
        return loom(ctx).file_content(file)
    return _json_arg("--content-json", content_json)


def _json_arg(name: str, value: str | None) -> Any:
    if value is None:
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise InvalidInput(name, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None


@app.command()
def new(
    ctx: typer.Context,
    text: str = typer.Option(None, "--text", help="The first message."),
    file: Path = typer.Option(None, "--file", help="Read the first message from a file."),
    content_json: str = typer.Option(None, "--content-json", help="The first message as JSON blocks."),
    mode: str = typer.Option("dialogue", "--mode", help="dialogue or buffer (fixed for the tree)."),
    title: str = typer.Option(None, "--title", help="Defaults to the first words."),
    system: str = typer.Option(None, "--system", help="System context for every context window."),
    role: str = typer.Option("user", "--role"),
    options: str = typer.Option(None, "--options", help="Tree default options (JSON object)."),
    session: str = typer.Option(None, "--session", help="Create a session at the root."),
    as_json: bool = JSON,
) -> None:
    """Start a new tree with its first message."""
    tree, node = loom(ctx).new_tree(
        _content(ctx, text, file, content_json), mode=mode, title=title, system=system,
        role=role, options=_json_arg("--options", options), session=session,
    )
    emit(as_json, {"tree": tree.id, "node": node.id}, f"tree {tree.id}\nnode {node.id}")


@app.command()
def add(
    ctx: typer.Context,
    headish: str = typer.Argument(None, help="Where to continue: node id, prefix, ref, X~N, X^."),
    role: str = typer.Option(..., "--role", help="user, assistant, system or tool."),
    route: str = typer.Option(None, "--route", help="Instead of HEADISH: thread:N, session:S, persona:P or smart:TEXT."),
    text: str = typer.Option(None, "--text"),
    file: Path = typer.Option(None, "--file"),
    content_json: str = typer.Option(None, "--content-json"),
    author: str = typer.Option(None, "--author", help="Author agent id."),
    source: str = typer.Option("human", "--source", help="human, trigger, agent, webhook, cron, event."),
    also: list[str] = typer.Option([], "--also", help="Extra context source (repeatable)."),
    instruction: list[str] = typer.Option([], "--instruction", help="Extra instruction source."),
    options: str = typer.Option(None, "--options", help="Options delta (JSON object)."),
    cache: bool = typer.Option(False, "--cache", help="Mark this turn for provider caching."),
    expect: str = typer.Option(None, "--expect", help="Fail unless the session is at this node."),
    policy: str = typer.Option("retry", "--policy", help="retry or fail when the session moved."),
    as_json: bool = JSON,
) -> None:
    """Add a message after HEADISH; a session named as HEADISH moves to it."""
    lm = loom(ctx)
    if route is None and headish is None:
        raise InvalidInput("headish", "give a HEADISH or --route, not both")
    if route is None:  # the everyday case: no routing to load
        append: Any = lambda content, **fields: lm.append(headish, content, **fields)  # noqa: E731
    else:
        from .agents import routed

        append = routed(lm, headish, route)
    node = append(
        _content(ctx, text, file, content_json), role=role, author=author,
        source=source, options=_json_arg("--options", options), cache=cache,
        also=[(h, "context") for h in also] + [(h, "instruction") for h in instruction],
        expect=expect and lm.resolve(expect).node, policy=policy,
    )
    emit(as_json, {"node": node.id}, node.id)


@app.command()
def edit(
    ctx: typer.Context,
    node: str = typer.Argument(..., help="The node to edit (through a session or view to select it there)."),
    text: str = typer.Option(None, "--text"),
    file: Path = typer.Option(None, "--file"),
    content_json: str = typer.Option(None, "--content-json"),
    author: str = typer.Option(None, "--author"),
    as_json: bool = JSON,
) -> None:
    """Write a new version of a node; what follows it stays attached."""
    new_node = loom(ctx).edit(node, _content(ctx, text, file, content_json), author=author)
    emit(as_json, {"node": new_node.id}, new_node.id)


@app.command()
def select(
    ctx: typer.Context,
    view: str = typer.Argument(..., help="A session or view."),
    node: str = typer.Argument(..., help="The version it should use for that slot."),
    as_json: bool = JSON,
) -> None:
    """Make a session or view use a given version of a slot."""
    ref = loom(ctx).select(view, node)
    emit(as_json, ref.to_json(), f"{ref.name} uses {loom(ctx).resolve(node).node}")


@app.command()
def link(
    ctx: typer.Context,
    src: str = typer.Argument(...),
    dst: str = typer.Argument(...),
    type: str = typer.Option("link", "--type", help="Between nodes: annotation or link; "
                             "else any name (cites, source...)."),
    as_json: bool = JSON,
) -> None:
    """Reference DST from SRC: between two nodes an annotation (never in context) or a
    link (may cross trees); between any addresses (tree:, doc:, coll:, sha256:) a
    reference that `backlinks` finds."""
    from ..references import service as R

    out = R.link(loom(ctx), src, dst, type)
    emit(as_json, out, out["id"])


@app.command()
def bookmark(
    ctx: typer.Context,
    node: str = typer.Argument(..., help="The node to label, or `list`."),
    label: str = typer.Argument(None, help="Unique in the store; usable as a headish."),
    tree: str = typer.Option(None, "--tree", help="bookmark list: of one tree."),
    delete: bool = typer.Option(False, "--delete", help="Remove the bookmark LABEL."),
    as_json: bool = JSON,
) -> None:
    """Put a fixed, named label on a node; `bookmark list` lists them."""
    lm = loom(ctx)
    if label is None:
        if node != "list":
            raise UsageError("bookmark", "give a NODE and a LABEL (or `bookmark list`)")
        from .refs import list_refs

        list_refs(ctx, "bookmark", tree, as_json)
        return
    if delete:
        lm.delete_ref(label)
        emit(as_json, {"deleted": label}, f"deleted {label}")
        return
    ref = lm.bookmark(node, label)
    emit(as_json, ref.to_json(), f"{label} -> {ref.node}")


@app.command()
def tag(
    ctx: typer.Context,
    node: str = typer.Argument(...),
    tags: list[str] = typer.Argument(...),
    remove: bool = typer.Option(False, "--remove"),
    as_json: bool = JSON,
) -> None:
    """Add (or --remove) tags on a node."""
    meta = loom(ctx).tag(node, *tags, remove=remove)
    emit(as_json, meta.to_json(), " ".join(meta.tags))


@app.command()
def exclude(
    ctx: typer.Context,
    node: str = typer.Argument(...),
    off: bool = typer.Option(False, "--off", help="Include it again."),
    as_json: bool = JSON,
) -> None:
    """Keep a node out of every context window built through it."""
    meta = loom(ctx).exclude(node, on=not off)
    emit(as_json, meta.to_json(), "excluded" if meta.excluded else "included")


@app.command()
def prune(
    ctx: typer.Context,
    node: str = typer.Argument(...),
    off: bool = typer.Option(False, "--off", help="Restore it."),
    as_json: bool = JSON,
) -> None:
    """Soft-delete a branch: kept, but hidden from leaves and drawings."""
    meta = loom(ctx).prune(node, on=not off)
    emit(as_json, meta.to_json(), "pruned" if meta.pruned else "restored")


@app.command()
def rename(
    ctx: typer.Context,
    tree: str = typer.Argument(..., help="Tree id, prefix, or a ref/node inside it."),
    title: str = typer.Argument(...),
    as_json: bool = JSON,
) -> None:
    """Give a tree a new title."""
    t = loom(ctx).rename(tree, title)
    emit(as_json, t.to_json(), f"{t.id}  {t.title}")
