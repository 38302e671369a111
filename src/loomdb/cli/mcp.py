"""`loomdb mcp`: serve the store to MCP clients over stdio."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from . import JSON, State, loom, settings_of
from . import root as app

if TYPE_CHECKING:
    from ..api import Loom
    from ..front import Runtime


@app.command("mcp")
@JSON
@click.pass_context
def mcp_cmd(ctx: click.Context, as_json: bool) -> None:
    """Serve this store over stdio as an MCP server (tools and resources). Its stdout is
    JSON-RPC already; --json only makes an error before it starts `{"error": ...}`.
    The store is named (--db, $LOOMDB_URL or $LOOMDB_HOME): an MCP client starts this
    in whatever folder it likes, whose ./.loomdb is nobody's choice."""
    from ..errors import UsageError
    from ..mcp.stdio import serve

    state = ctx.find_object(State)
    if state is None or not state.named:
        raise UsageError("--db", "loomdb mcp serves only a store it is given: name it "
                                 "with --db PATH|URL (it never defaults to ./.loomdb)")

    def store() -> tuple[Loom, Runtime]:
        # opened at the first call that needs it: the handshake is answered before
        from ..front import Runtime
        from .settings import providers_config, tools_config

        # the runtime carries the settings the command read from its environment
        return loom(ctx), Runtime(config=providers_config(ctx), settings=settings_of(ctx),
                                  tools=tools_config(ctx))

    serve(store)
