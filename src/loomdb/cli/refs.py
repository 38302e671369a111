"""Commands on refs: fork, session ..., view ...; every move is compare-and-swap."""

from __future__ import annotations

import click

from ..errors import InvalidInput
from . import JSON, argument, emit, loom
from . import root as app


@app.group("session")
def session_app() -> None:
    """Sessions: named pointers that move as turns are added."""


@app.group("view")
def view_app() -> None:
    """Views: named pointers with version selections."""


@app.command()
@argument("headish")
@argument("name", help="Name of the new session.")
@click.option("--fresh", is_flag=True,
              help="A new tree from this message, nothing before it in the context.")
@click.option("--summary", metavar="MODEL",
              help="With --fresh: the root holds MODEL's summary of the path up to here.")
@JSON
@click.pass_context
def fork(ctx: click.Context, headish: str, name: str, fresh: bool, summary: str | None,
         as_json: bool) -> None:
    """Start a new session NAME at HEADISH (O(1): nothing is copied). With --fresh, a
    new tree continuing from that message (lineage kept, the history before it left)."""
    if summary is not None and not fresh:
        raise InvalidInput("--summary", "summarizes the path into a fresh tree: add --fresh")
    if fresh:
        from .branches import door

        tree, root = door(ctx).branches.fork_fresh(headish, name, summary=summary)
        emit(as_json, {"name": name, "node": root.id, "tree": tree.id,
                       "continued": (tree.lineage or {}).get("continued")},
             f"{name} -> {root.id} (new tree {tree.id})")
        return
    ref = loom(ctx).fork(headish, name)
    emit(as_json, {"name": ref.name, "node": ref.node}, f"{ref.name} -> {ref.node}")


def list_refs(ctx: click.Context, kind: str, tree: str | None, as_json: bool) -> None:
    """List the refs of one kind (of one tree), as `session list` and `view list` do."""
    lm = loom(ctx)
    refs = lm.as_(lm.operator).refs.list(kind, tree)  # (not those of the trash's trees)
    rows = [{"name": r.name, "node": r.node, "tree": r.tree, "updated_at": r.updated_at}
            for r in refs]
    emit(as_json, {f"{kind}s": rows},
         "\n".join(f"{r['name']}\t{r['node']}\t{r['updated_at']}" for r in rows) or f"no {kind}s")


@session_app.command("list")
@click.option("--tree")
@JSON
@click.pass_context
def session_list(ctx: click.Context, tree: str | None, as_json: bool) -> None:
    """List sessions (of one tree with --tree)."""
    list_refs(ctx, "session", tree, as_json)


@session_app.command("show")
@argument("name")
@JSON
@click.pass_context
def session_show(ctx: click.Context, name: str, as_json: bool) -> None:
    """Where a session points."""
    ref = loom(ctx).ref(name)
    text = f"{ref.name} -> {ref.node}"
    if ref.forked_from:
        from .drawing import breadcrumb

        text += f"  ({breadcrumb(ref.forked_from)})"
    emit(as_json, {"name": ref.name, "node": ref.node, "tree": ref.tree,
                   "selections": ref.selections, "forked_from": ref.forked_from}, text)


@session_app.command("set")
@argument("name")
@argument("headish", required=False)
@click.option("--expect", help="Only move if it is still at this node.")
@click.option("--persona", help="Bind the session to a persona.")
@click.option("--agent", help="Bind the session to an agent.")
@JSON
@click.pass_context
def session_set(ctx: click.Context, name: str, headish: str | None, expect: str | None,
                persona: str | None, agent: str | None, as_json: bool) -> None:
    """Move a session (compare-and-swap against --expect, else its current node)."""
    lm = loom(ctx)
    if headish is None or persona or agent:
        from .agent_hooks import bind

        return bind(ctx, name, headish, persona, agent, as_json)
    ref = lm.set_ref(name, headish, expect=lm.resolve(expect).node if expect else None)
    emit(as_json, {"name": ref.name, "node": ref.node}, f"{ref.name} -> {ref.node}")


@session_app.command("log")
@argument("name")
@JSON
@click.pass_context
def session_log(ctx: click.Context, name: str, as_json: bool) -> None:
    """Every move of a session: when, from, to, by whom, why."""
    moves = [m.to_json() for m in loom(ctx).ref_log(name)]
    emit(as_json, {"name": name, "moves": moves}, "\n".join(
        f"{m['seq']}\t{m['at']}\t{m['from'] or '-'} -> {m['to'] or '-'}\t{m['by']}\t{m['reason']}"
        for m in moves))


@session_app.command("undo")
@argument("name")
@JSON
@click.pass_context
def session_undo(ctx: click.Context, name: str, as_json: bool) -> None:
    """Move a session back to where its last move took it from."""
    ref = loom(ctx).undo(name)
    emit(as_json, {"name": ref.name, "node": ref.node}, f"{ref.name} -> {ref.node}")


@session_app.command("delete")
@argument("name")
@JSON
@click.pass_context
def session_delete(ctx: click.Context, name: str, as_json: bool) -> None:
    """Delete a session (its nodes stay)."""
    loom(ctx).delete_ref(name)
    emit(as_json, {"deleted": name}, f"deleted {name}")


@view_app.command("new")
@argument("name")
@argument("headish")
@JSON
@click.pass_context
def view_new(ctx: click.Context, name: str, headish: str, as_json: bool) -> None:
    """Create a view NAME at HEADISH (then `loomdb select NAME VERSION`)."""
    ref = loom(ctx).view(name, headish)
    emit(as_json, {"name": ref.name, "node": ref.node}, f"{ref.name} -> {ref.node}")


@view_app.command("list")
@click.option("--tree")
@JSON
@click.pass_context
def view_list(ctx: click.Context, tree: str | None, as_json: bool) -> None:
    """List views."""
    list_refs(ctx, "view", tree, as_json)


@view_app.command("delete")
@argument("name")
@JSON
@click.pass_context
def view_delete(ctx: click.Context, name: str, as_json: bool) -> None:
    """Delete a view (its nodes and every session stay)."""
    lm = loom(ctx)
    if lm.ref(name).kind != "view":
        raise InvalidInput(f"ref {name!r}", f"is a {lm.ref(name).kind}, not a view")
    lm.delete_ref(name)
    emit(as_json, {"deleted": name}, f"deleted {name}")
