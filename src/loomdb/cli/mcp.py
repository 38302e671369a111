"""`loomdb mcp`: serve the store to MCP clients over stdio."""

from __future__ import annotations

import os

import typer

from . import app, loom


@app.command("mcp")
def mcp_cmd(ctx: typer.Context) -> None:
    """Serve this store over stdio as an MCP server (tools and resources)."""
    from ..mcp.server import serve
    from .models import providers_config

    serve(loom(ctx), providers_config(ctx), os.environ)
