"""The search command: full text, semantic or hybrid, over messages, document
revisions and items."""

from __future__ import annotations

import click

from ..errors import InvalidInput
from . import JSON, argument, emit, loom
from . import root as app


@app.command()
@argument("query", required=False)
@click.option("--tree")
@click.option("--role")
@click.option("--author")
@click.option("--tag")
@click.option("--kind", help="message, document or item.")
@click.option("--limit", default=20)
@click.option("--semantic", is_flag=True, help="Rank by meaning (local embedding model).")
@click.option("--hybrid", is_flag=True, help="Fuse the full-text and semantic rankings.")
@click.option("--reindex", is_flag=True,
              help="Embed the entries not embedded yet first, in batches (the backlog).")
@click.option("--all", "everything", is_flag=True, help="With --reindex: every entry again.")
@click.option("--status", "show_status", is_flag=True,
              help="Print how many entries are embedded, of how many.")
@JSON
@click.pass_context
def search(ctx: click.Context, query: str | None, tree: str | None, role: str | None,
           author: str | None, tag: str | None, kind: str | None, limit: int, semantic: bool,
           hybrid: bool, reindex: bool, everything: bool, show_status: bool,
           as_json: bool) -> None:
    """Find messages, document revisions and collection items by their words or meaning.

    A semantic or hybrid query ranks the entries embedded so far (the embedding worker
    of `loomdb serve`, `watch` and `gateway` embeds new ones behind the writes) and
    says how many are not yet; `--reindex` embeds that backlog here."""
    if semantic and hybrid:
        raise InvalidInput("search", "--semantic and --hybrid exclude each other")
    if everything and not reindex:
        raise InvalidInput("--all", "goes with --reindex")
    if reindex:
        embedded = loom(ctx).search.reindex(everything)
        if query is None:
            emit(as_json, {"embedded": embedded}, f"embedded {embedded} entries")
            return
    if show_status:
        got = loom(ctx).search.status()
        emit(as_json, got, f"embedded {got['embedded']} of {got['total']} entries "
                           f"({got['pending']} pending)")
        return
    if query is None:
        raise InvalidInput("search", "a QUERY is needed (or --reindex or --status alone)")
    mode = "semantic" if semantic else "hybrid" if hybrid else "text"
    hits = loom(ctx).search(query, tree=tree, role=role, author=author, tag=tag, kind=kind,
                            limit=limit, mode=mode)
    lines = [f"{h['entity']}\t{h['snippet']}" for h in hits] or ["no hits"]
    if hits.pending:
        lines.append(f"({hits.pending} entries not embedded yet: `loomdb search --reindex`)")
    emit(as_json, hits.answer(), "\n".join(lines))
