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
@click.option("--reindex", is_flag=True, help="Embed every entry again first.")
@JSON
@click.pass_context
def search(ctx: click.Context, query: str | None, tree: str | None, role: str | None,
           author: str | None, tag: str | None, kind: str | None, limit: int, semantic: bool,
           hybrid: bool, reindex: bool, as_json: bool) -> None:
    """Find messages, document revisions and collection items by their words or meaning."""
    if semantic and hybrid:
        raise InvalidInput("search", "--semantic and --hybrid exclude each other")
    if reindex:
        embedded = loom(ctx).search.reindex()
        if query is None:
            emit(as_json, {"embedded": embedded}, f"embedded {embedded} entries")
            return
    if query is None:
        raise InvalidInput("search", "a QUERY is needed (or --reindex alone)")
    mode = "semantic" if semantic else "hybrid" if hybrid else "text"
    hits = loom(ctx).search(query, tree=tree, role=role, author=author, tag=tag, kind=kind,
                            limit=limit, mode=mode)
    emit(as_json, {"hits": hits},
         "\n".join(f"{h['entity']}\t{h['snippet']}" for h in hits) or "no hits")
