"""`loomdb mcp`: serve the store to MCP clients over stdio."""

from __future__ import annotations

import os

import click

from . import JSON, loom
from . import root as app


@app.command("mcp")
@JSON
@click.pass_context
def mcp_cmd(ctx: click.Context, as_json: bool) -> None:
    """Serve this store over stdio as an MCP server (tools and resources). Its stdout is
    JSON-RPC already; --json only makes an error before it starts `{"error": ...}`."""
    from ..front import Runtime
    from ..mcp.server import serve
    from .agents import tools_config
    from .models import providers_config

    # the edge reads the environment once and hands it down in the runtime
    serve(loom(ctx), Runtime(config=providers_config(ctx), environ=os.environ,
                             tools=tools_config(ctx)))
