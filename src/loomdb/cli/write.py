"""Commands that write nodes: new, add, edit, select, link, and the overlay flags."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import click

from ..errors import InvalidInput, UsageError
from . import JSON, PATH, argument, arguments, emit, json_arg, loom, repeatable
from . import root as app


def _content(ctx: click.Context, text: str | None, file: Path | None, content_json: str | None) -> Any:
    given = [x for x in (text, file, content_json) if x is not None]
    if len(given) != 1:
        raise InvalidInput("content", "give exactly one of --text, --file, --content-json")
    if text is not None:
        return text
    if file is not None:
        return loom(ctx).file_content(file)
    return json_arg("--content-json", content_json)


@app.command()
@click.option("--text", help="The first message.")
@click.option("--file", type=PATH, help="Read the first message from a file.")
@click.option("--content-json", help="The first message as JSON blocks.")
@click.option("--mode", default="dialogue", help="dialogue or buffer (fixed for the tree).")
@click.option("--title", help="Defaults to the first words.")
@click.option("--system", help="System context for every context window.")
@click.option("--role", default="user")
@click.option("--options", help="Tree default options (JSON object).")
@click.option("--session", help="Create a session at the root.")
@click.option("--template", help="Start from this template (`loomdb piece add --template`).")
@click.option("--system-piece", help="A piece as the system context (NAME or NAME@VERSION).")
@JSON
@click.pass_context
def new(ctx: click.Context, text: str | None, file: Path | None, content_json: str | None,
        mode: str, title: str | None, system: str | None, role: str, options: str | None,
        session: str | None, template: str | None, system_piece: str | None,
        as_json: bool) -> None:
    """Start a new tree with its first message."""
    lm = loom(ctx)
    content = _content(ctx, text, file, content_json)
    if template is not None or system_piece is not None:
        tree, node = lm.as_(lm.operator).trees.new(
            content, mode=mode, title=title, system=system, role=role,
            options=json_arg("--options", options), session=session, template=template,
            system_piece=system_piece)
    else:
        tree, node = lm.new_tree(content, mode=mode, title=title, system=system, role=role,
                                 options=json_arg("--options", options), session=session)
    emit(as_json, {"tree": tree.id, "node": node.id}, f"tree {tree.id}\nnode {node.id}")


@app.command()
@argument("headish", required=False,
          help="Where to continue: node id, prefix, ref, X~N, X^.")
@click.option("--role", required=True, help="user, assistant, system or tool.")
@click.option("--route", help="Instead of HEADISH: thread:N, session:S, persona:P or smart:TEXT.")
@click.option("--text")
@click.option("--file", type=PATH)
@click.option("--content-json")
@click.option("--author", help="Author agent id.")
@click.option("--source", default="human", help="human, trigger, agent, webhook, cron, event.")
@repeatable("--also", help="Extra context source (repeatable).")
@repeatable("--instruction", help="Extra instruction source.")
@click.option("--options", help="Options delta (JSON object).")
@click.option("--cache", is_flag=True, help="Mark this turn for provider caching.")
@click.option("--expect", help="Fail unless the session is at this node.")
@click.option("--policy", default="retry", help="retry or fail when the session moved.")
@JSON
@click.pass_context
def add(ctx: click.Context, headish: str | None, role: str, route: str | None,
        text: str | None, file: Path | None, content_json: str | None, author: str | None,
        source: str, also: list[str], instruction: list[str], options: str | None,
        cache: bool, expect: str | None, policy: str, as_json: bool) -> None:
    """Add a message after HEADISH; a session named as HEADISH moves to it."""
    lm = loom(ctx)
    append: Callable[..., Any]
    if route is not None:
        from .agent_hooks import routed

        append = routed(lm, headish, route)
    elif headish is not None:  # the everyday case: no routing to load
        append = partial(lm.append, headish)
    else:
        raise InvalidInput("headish", "give a HEADISH or --route, not both")
    node = append(
        _content(ctx, text, file, content_json), role=role, author=author,
        source=source, options=json_arg("--options", options), cache=cache,
        also=[(h, "context") for h in also] + [(h, "instruction") for h in instruction],
        expect=expect and lm.resolve(expect).node, policy=policy,
    )
    emit(as_json, {"node": node.id}, node.id)


@app.command()
@argument("node", help="The node to edit (through a session or view to select it there).")
@click.option("--text")
@click.option("--file", type=PATH)
@click.option("--content-json")
@click.option("--author")
@JSON
@click.pass_context
def edit(ctx: click.Context, node: str, text: str | None, file: Path | None,
         content_json: str | None, author: str | None, as_json: bool) -> None:
    """Write a new version of a node; what follows it stays attached."""
    new_node = loom(ctx).edit(node, _content(ctx, text, file, content_json), author=author)
    emit(as_json, {"node": new_node.id}, new_node.id)


@app.command()
@argument("view", help="A session or view.")
@argument("node", help="The version it should use for that slot.")
@JSON
@click.pass_context
def select(ctx: click.Context, view: str, node: str, as_json: bool) -> None:
    """Make a session or view use a given version of a slot."""
    ref = loom(ctx).select(view, node)
    emit(as_json, ref.to_json(), f"{ref.name} uses {loom(ctx).resolve(node).node}")


@app.command()
@argument("src")
@argument("dst")
@click.option("--type", default="link", help="Between nodes: annotation or link; "
              "else any name (cites, source...).")
@JSON
@click.pass_context
def link(ctx: click.Context, src: str, dst: str, type: str, as_json: bool) -> None:
    """Reference DST from SRC: between two nodes an annotation (never in context) or a
    link (may cross trees); between any addresses (tree:, doc:, coll:, sha256:) a
    reference that `backlinks` finds."""
    out = loom(ctx).references.link(src, dst, type)
    emit(as_json, out, out["id"])


@app.command()
@argument("node", help="The node to label, or `list`.")
@argument("label", required=False, help="Unique in the store; usable as a headish.")
@click.option("--tree", help="bookmark list: of one tree.")
@click.option("--delete", is_flag=True, help="Remove the bookmark LABEL.")
@JSON
@click.pass_context
def bookmark(ctx: click.Context, node: str, label: str | None, tree: str | None, delete: bool,
             as_json: bool) -> None:
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
@argument("node")
@arguments("tags")
@click.option("--remove", is_flag=True)
@JSON
@click.pass_context
def tag(ctx: click.Context, node: str, tags: list[str], remove: bool, as_json: bool) -> None:
    """Add (or --remove) tags on a node."""
    meta = loom(ctx).tag(node, *tags, remove=remove)
    emit(as_json, meta.to_json(), " ".join(meta.tags))


@app.command()
@argument("node")
@click.option("--off", is_flag=True, help="Include it again.")
@JSON
@click.pass_context
def exclude(ctx: click.Context, node: str, off: bool, as_json: bool) -> None:
    """Keep a node out of every context window built through it."""
    meta = loom(ctx).exclude(node, on=not off)
    emit(as_json, meta.to_json(), "excluded" if meta.excluded else "included")


@app.command()
@argument("node")
@click.option("--off", is_flag=True, help="Restore it.")
@JSON
@click.pass_context
def prune(ctx: click.Context, node: str, off: bool, as_json: bool) -> None:
    """Soft-delete a branch: kept, but hidden from leaves and drawings."""
    meta = loom(ctx).prune(node, on=not off)
    emit(as_json, meta.to_json(), "pruned" if meta.pruned else "restored")


@app.command()
@argument("tree", help="Tree id, prefix, or a ref/node inside it.")
@argument("title")
@JSON
@click.pass_context
def rename(ctx: click.Context, tree: str, title: str, as_json: bool) -> None:
    """Give a tree a new title."""
    t = loom(ctx).rename(tree, title)
    emit(as_json, t.to_json(), f"{t.id}  {t.title}")
