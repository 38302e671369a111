"""The search command: full text over messages, document revisions and items."""

from __future__ import annotations

import typer

from . import JSON, app, emit, loom


@app.command()
def search(ctx: typer.Context, query: str = typer.Argument(...),
           tree: str = typer.Option(None, "--tree"), role: str = typer.Option(None, "--role"),
           author: str = typer.Option(None, "--author"), tag: str = typer.Option(None, "--tag"),
           kind: str = typer.Option(None, "--kind", help="message, document or item."),
           limit: int = typer.Option(20, "--limit"), as_json: bool = JSON) -> None:
    """Find messages, document revisions and collection items by their words."""
    from ..search import service as S

    hits = S.search(loom(ctx), S.Query(query, tree, role, author, tag, kind, limit))
    emit(as_json, {"hits": hits},
         "\n".join(f"{h['entity']}\t{h['snippet']}" for h in hits) or "no hits")
