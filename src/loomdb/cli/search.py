"""The search command: full text, semantic or hybrid, over messages, document
revisions and items."""

from __future__ import annotations

import typer

from ..errors import InvalidInput
from . import JSON, emit, loom
from . import root as app


@app.command()
def search(ctx: typer.Context, query: str = typer.Argument(None),
           tree: str = typer.Option(None, "--tree"), role: str = typer.Option(None, "--role"),
           author: str = typer.Option(None, "--author"), tag: str = typer.Option(None, "--tag"),
           kind: str = typer.Option(None, "--kind", help="message, document or item."),
           limit: int = typer.Option(20, "--limit"),
           semantic: bool = typer.Option(False, "--semantic",
                                         help="Rank by meaning (local embedding model)."),
           hybrid: bool = typer.Option(False, "--hybrid",
                                       help="Fuse the full-text and semantic rankings."),
           reindex: bool = typer.Option(False, "--reindex",
                                        help="Embed every entry again first."),
           as_json: bool = JSON) -> None:
    """Find messages, document revisions and collection items by their words or meaning."""
    from ..search import service as S

    if semantic and hybrid:
        raise InvalidInput("search", "--semantic and --hybrid exclude each other")
    if reindex:
        embedded = S.reindex(loom(ctx))
        if query is None:
            emit(as_json, {"embedded": embedded}, f"embedded {embedded} entries")
            return
    if query is None:
        raise InvalidInput("search", "a QUERY is needed (or --reindex alone)")
    mode = "semantic" if semantic else "hybrid" if hybrid else "text"
    hits = S.search(loom(ctx), S.Query(query, tree, role, author, tag, kind, limit, mode))
    emit(as_json, {"hits": hits},
         "\n".join(f"{h['entity']}\t{h['snippet']}" for h in hits) or "no hits")
