"""Backlinks (`link` for any pair lives with the other writing commands)."""

from __future__ import annotations

import click

from . import JSON, argument, emit, loom
from . import root as app


@app.command()
@argument("entity", help="Any address: node, tree:ID, doc:NAME[@REV], coll:NAME[/ITEM], "
          "sha256:...")
@JSON
@click.pass_context
def backlinks(ctx: click.Context, entity: str, as_json: bool) -> None:
    """Everything that references ENTITY (dangling references are marked, not errors)."""
    links = loom(ctx).references.backlinks(entity)
    emit(as_json, {"links": links},
         "\n".join(f"{x['from']} -{x['type']}-> {x['to']}" + (" (dangling)" if x.get("dangling")
                                                              else "") for x in links))
