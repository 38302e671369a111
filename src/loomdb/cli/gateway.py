"""`loomdb gateway`: serve the OpenAI-compatible gateway over the store."""

from __future__ import annotations

import os

import typer

from ..errors import InvalidInput, MissingExtra
from . import JSON, emit, loom
from . import root as app
from .models import providers_config

LOOPBACK = ("127.0.0.1", "::1", "localhost")


@app.command()
def gateway(
    ctx: typer.Context,
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (loopback only)."),
    port: int = typer.Option(8000, "--port"),
    as_json: bool = JSON,
) -> None:
    """Serve /v1/chat/completions, /v1/responses, /v1/completions and /v1/models: point
    an OpenAI client's base_url at http://HOST:PORT/v1 and every call is recorded."""
    if host not in LOOPBACK:
        raise InvalidInput("--host", "the gateway has no users of its own: bind loopback only")
    try:
        import uvicorn

        from ..gateway import create_gateway_app
    except ImportError:
        raise MissingExtra("the gateway", "server") from None
    application = create_gateway_app(loom(ctx), config=providers_config(ctx), environ=os.environ)
    url = f"http://{host}:{port}/v1"
    if as_json:
        emit(True, {"url": url})
    else:
        typer.echo(f"loomdb gateway on {url} (Ctrl-C stops it)", err=True)
    uvicorn.run(application, host=host, port=port, log_level="warning")
