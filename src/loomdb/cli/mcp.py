"""`loomdb mcp`: serve the store to MCP clients over stdio."""

from __future__ import annotations

import click

from . import JSON, loom, settings_of
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

    # the runtime carries the settings the command read from its environment
    serve(loom(ctx), Runtime(config=providers_config(ctx), settings=settings_of(ctx),
                             tools=tools_config(ctx)))
