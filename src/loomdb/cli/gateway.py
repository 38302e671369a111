"""`loomdb gateway`: serve the model gateway (OpenAI's and Anthropic's APIs) over the store."""

from __future__ import annotations

import gc

import click

from ..errors import InvalidInput, MissingExtra
from . import JSON, embed_behind, emit, loom, settings_of
from . import root as app
from .settings import providers_config

LOOPBACK = ("127.0.0.1", "::1", "localhost")


@app.command()
@click.option("--host", default="127.0.0.1", help="Address to bind (loopback only).")
@click.option("--port", default=8000, type=click.IntRange(1, 65535))
@JSON
@click.pass_context
def gateway(ctx: click.Context, host: str, port: int, as_json: bool) -> None:
    """Serve /v1/chat/completions, /v1/responses, /v1/messages, /v1/completions and
    /v1/models: point an OpenAI client's base_url at http://HOST:PORT/v1 (an Anthropic
    client's, or Claude Code's ANTHROPIC_BASE_URL, at http://HOST:PORT) and every call is
    recorded."""
    if host not in LOOPBACK:
        raise InvalidInput("--host", "the gateway has no users of its own: bind loopback only")
    try:
        import uvicorn

        from ..gateway import create_gateway_app
    except ImportError:
        raise MissingExtra("the gateway", "server") from None
    from ..front import Runtime
    from ..guard import Trust

    lm = loom(ctx)
    lm.as_(lm.operator).gateway().models()  # a store with users is refused before serving
    # the runtime and the trust carry the settings the command read from its environment
    given = settings_of(ctx)
    application = create_gateway_app(
        lm, runtime=Runtime(config=providers_config(ctx), settings=given),
        trust=Trust.configured(host, (), given, lm.limits, users=False))
    url = f"http://{host}:{port}/v1"
    if as_json:
        emit(True, {"url": url})
    else:
        click.echo(f"loomdb gateway on {url} (Ctrl-C stops it)", err=True)
    embed_behind(ctx)  # new entries embedded behind the writes
    # what is loaded by now lives as long as the server: out of the cyclic collector's
    # full passes, which a long history's objects would set off on a client's request
    gc.collect()
    gc.freeze()
    uvicorn.run(application, host=host, port=port, log_level="warning")
