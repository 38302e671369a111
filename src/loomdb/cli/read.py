"""Commands that read: path, children, siblings, versions, leaves, branch-points, show,
log, tree, trees, context, verify, archive."""

from __future__ import annotations

import json
from typing import Any

import click

from .. import content as C
from ..shapes import node_json
from . import JSON, argument, emit, loom
from . import root as app


def _ids(as_json: bool, ids: list[str]) -> None:
    emit(as_json, {"nodes": ids}, "\n".join(ids))


@app.command()
@argument("headish")
@JSON
@click.pass_context
def path(ctx: click.Context, headish: str, as_json: bool) -> None:
    """Node ids from the root to HEADISH."""
    _ids(as_json, loom(ctx).path(headish))


@app.command()
@argument("node")
@JSON
@click.pass_context
def children(ctx: click.Context, node: str, as_json: bool) -> None:
    """The continuations of a node (of any of its versions)."""
    _ids(as_json, loom(ctx).children(node))


@app.command()
@argument("node")
@JSON
@click.pass_context
def siblings(ctx: click.Context, node: str, as_json: bool) -> None:
    """The other alternatives under the same parent."""
    _ids(as_json, loom(ctx).siblings(node))


@app.command()
@argument("node")
@JSON
@click.pass_context
def versions(ctx: click.Context, node: str, as_json: bool) -> None:
    """Every version of a node's slot, the original first."""
    _ids(as_json, loom(ctx).versions(node))


@app.command()
@argument("tree", help="Tree id, prefix, or any headish inside it.")
@click.option("--include-pruned", is_flag=True)
@JSON
@click.pass_context
def leaves(ctx: click.Context, tree: str, include_pruned: bool, as_json: bool) -> None:
    """Nodes nothing continues from."""
    _ids(as_json, loom(ctx).leaves(tree, include_pruned=include_pruned))


@app.command("branch-points")
@argument("tree")
@JSON
@click.pass_context
def branch_points(ctx: click.Context, tree: str, as_json: bool) -> None:
    """Nodes with two or more continuations."""
    _ids(as_json, loom(ctx).branch_points(tree))


@app.command()
@argument("node")
@JSON
@click.pass_context
def edges(ctx: click.Context, node: str, as_json: bool) -> None:
    """A node's edges, incoming and outgoing, by type (continuation, annotation, link...)."""
    found = loom(ctx).edge_map(node)
    lines = [f"node {found['node']}"]
    for way, arrow in (("incoming", "<-"), ("outgoing", "->")):
        for kind, ends in found[way].items():
            lines += [f"  {arrow} {kind:<12} {e['node']}" + (f"  (edge {e['edge']})" if "edge" in e else "")
                      for e in ends]
    emit(as_json, found, "\n".join(lines))


@app.command()
@argument("node")
@click.option("--logprobs", is_flag=True,
              help="Each generated token: probability and top alternatives.")
@JSON
@click.pass_context
def show(ctx: click.Context, node: str, logprobs: bool, as_json: bool) -> None:
    """One node in full, with its overlay."""
    lm = loom(ctx)
    n = lm.node(node)
    if logprobs:
        _show_logprobs(lm, n, as_json)
        return
    meta = lm.meta(n.id)
    data = node_json(n, meta)
    text = (f"node    {n.id}\ntree    {n.tree}\nparent  {n.parent or '-'}\nrole    {n.role}"
            f"  kind {n.kind}  author {n.author}  source {n.source}\ncreated {n.created_at}\n"
            f"hash    {n.chain_hash}\n"
            + (f"edited from {n.edited_from}\n" if n.edited_from else "")
            + _overlay_lines(meta)
            + "\n" + _render(n.content))
    emit(as_json, data, text)


def _overlay_lines(meta: Any) -> str:
    """The overlay as `show` prints it: bookmark, tags and flags, a line each when set."""
    lines = []
    if meta.bookmarked or meta.label:
        lines.append(f"bookmark {meta.label or '(unnamed)'}")
    if meta.tags:
        lines.append("tags    " + ", ".join(meta.tags))
    flags = [f for f in ("excluded", "pruned") if getattr(meta, f)]
    if flags:
        lines.append("flags   " + ", ".join(flags))
    return "".join(f"{line}\n" for line in lines)


def _show_logprobs(lm: Any, n: Any, as_json: bool) -> None:
    from ..logprobs import of_node, rows

    table = rows(of_node(lm, n))
    lines = [f"{'token':<16} {'prob':>7}  top alternatives"]
    for row in table:
        prob = "-" if row["probability"] is None else f"{row['probability']:.4f}"
        alts = "  ".join(f"{t['token']!r} {t['probability']:.3f}" for t in row["top"])
        lines.append(f"{row['token']!r:<16} {prob:>7}  {alts}")
    emit(as_json, {"node": n.id, "tokens": table}, "\n".join(lines))


def _render(blocks: list[dict[str, Any]]) -> str:
    out = []
    for b in blocks:
        if b["type"] == "text":
            out.append(b["text"])
        elif b["type"] == "thinking":
            out.append(f"[thinking] {b['thinking']}")
        elif b["type"] == "tool_use":
            out.append(f"[tool_use {b['name']}] {json.dumps(b['input'], ensure_ascii=False)}")
        elif b["type"] == "tool_result":
            out.append(f"[tool_result {b.get('tool_use_id') or b.get('name')}] {C.plain_text([b])}")
        else:
            out.append(f"[{b['type']} {b['mime_type']} {b['ref']}]")
    return "\n".join(out)


@app.command()
@argument("headish")
@JSON
@click.pass_context
def log(ctx: click.Context, headish: str, as_json: bool) -> None:
    """The conversation from the root to HEADISH, readable."""
    lm = loom(ctx)
    nodes = lm.nodes(lm.path(headish))
    if as_json:
        emit(True, {"nodes": [n.to_json() for n in nodes]})
        return
    from rich.console import Console

    console = Console(highlight=False)
    for n in nodes:
        mark = " (edited)" if n.edited_from else ""
        merged = (n.origin or {}).get("merged_from")
        if isinstance(merged, dict):  # a merge names the branch and the tip it brought in
            mark += f" (merged from {merged.get('ref') or 'node'} at {merged.get('node')})"
        console.print(f"[bold]{n.role}[/bold] [dim]{n.id} {n.author} {n.created_at}{mark}[/dim]")
        console.print(_render(n.content), markup=False)
        console.print()


@app.command()
@argument("tree")
@JSON
@click.pass_context
def tree(ctx: click.Context, tree: str, as_json: bool) -> None:
    """Draw a tree's branches, with refs and versions marked."""
    view = loom(ctx).tree_view(tree)
    if as_json:
        emit(True, view.to_json())
        return
    from rich.console import Console

    from .drawing import draw

    Console(highlight=False).print(draw(view))


@app.command()
@click.option("--archived", is_flag=True, help="List archived trees instead.")
@JSON
@click.pass_context
def trees(ctx: click.Context, archived: bool, as_json: bool) -> None:
    """All trees, newest first, with node counts."""
    lm = loom(ctx)
    found = lm.as_(lm.operator).trees.list(archived=archived)  # (not the trash)
    forks: dict[str, list[Any]] = {}
    for ref in lm.refs():
        if ref.forked_from:
            forks.setdefault(ref.tree, []).append(ref)
    rows = [{**t.to_json(), "forks": [{"name": r.name, "kind": r.kind, "from": r.forked_from}
                                      for r in forks.get(t.id, [])]} for t in found]
    from .drawing import breadcrumb

    lines = []
    for t in found:
        lines.append(f"{t.id}  {t.mode:8}  {t.nodes:6} nodes  {t.title}")
        continued = (t.lineage or {}).get("continued")
        if isinstance(continued, dict):  # a tail-fork: the tree and message it starts from
            lines.append(f"    continued from {continued.get('tree')} at {continued.get('node')}")
        lines += [f"    {r.kind} {r.name}: {breadcrumb(r.forked_from)}" for r in forks.get(t.id, [])]
    emit(as_json, {"trees": rows}, "\n".join(lines) or "no trees")


@app.command()
@argument("tree")
@click.option("--off", is_flag=True, help="Unarchive.")
@JSON
@click.pass_context
def archive(ctx: click.Context, tree: str, off: bool, as_json: bool) -> None:
    """Archive (soft-delete) a tree, or bring it back."""
    t = loom(ctx).archive(tree, on=not off)
    emit(as_json, t.to_json(), f"{t.id} {'archived' if t.archived_at else 'active'}")


@app.command()
@argument("tree", required=False, help="One tree (default: all).")
@JSON
@click.pass_context
def verify(ctx: click.Context, tree: str | None, as_json: bool) -> None:
    """Check the hash chain; exit 1 naming every tampered node and what inherits it."""
    report = loom(ctx).verify(tree)
    data = report.to_json()
    if as_json:
        emit(True, data)
    elif report.ok:
        click.echo(f"ok: {report.checked} nodes verified")
        for s in report.scrubbed:
            what = f"generation {s['generation']}" if s["kind"] == "generation" else "content"
            click.echo(f"scrubbed {s['node']} (tree {s['tree']}): spans redacted in its {what}")
        for s in report.stale:
            click.echo(f"stale {s['kind']} {s['item']} (tree {s['tree']}): made from {s['source']},"
                       " forgotten since (`loomdb compact --redo`)")
    else:
        for b in report.broken:
            click.echo(f"BROKEN {b['node']}: {b['reason']}")
    if not report.ok:
        ctx.exit(1)
