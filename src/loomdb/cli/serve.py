"""`loomdb serve` and `loomdb user ...`: the store over HTTP, and who may use it."""

from __future__ import annotations

import gc

import click

from ..errors import InvalidInput
from . import JSON, argument, embed_behind, emit, loom, settings_of
from . import root as app
from .settings import providers_config, tools_config


@app.group("user")
def user_app() -> None:
    """Users of the HTTP API: each sees only their own trees."""


@app.command()
@click.option("--host", default="127.0.0.1", help="Address to bind.")
@click.option("--port", default=8000, type=click.IntRange(1, 65535), help="Port to listen on.")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
              help="Another name the server answers to, on a store with users "
              "(repeatable; also $LOOMDB_ALLOW_HOSTS, comma-separated; '*' for any, behind "
              "a proxy that checks names). The loopback names and --host are always allowed.")
@JSON
@click.pass_context
def serve(ctx: click.Context, host: str, port: int, allow_hosts: tuple[str, ...],
          as_json: bool) -> None:
    """Serve the store over HTTP: the JSON API under /api and the web page at /. With
    --json the start line is `{"url": ...}` on stdout."""
    from ..front.users import any_users
    from ..server.state import is_loopback

    lm = loom(ctx)
    users = any_users(lm)
    if not users and not is_loopback(host):
        raise InvalidInput("--host", f"{host} is not loopback: add a user first "
                           "(`loomdb user add NAME`), or serve on 127.0.0.1")
    try:
        import uvicorn

        from ..guard import Trust
        from ..server import create_app
    except ImportError:
        from ..errors import MissingExtra

        raise MissingExtra("loomdb serve", "server") from None
    from ..front import Runtime

    given = settings_of(ctx)
    trust = Trust.configured(host, allow_hosts, given, lm.limits, users=users)
    # the models and the programs the user configured (approving a call over HTTP runs
    # its tool), read through the configuration-trust rule
    runtime = Runtime(config=providers_config(ctx), settings=given, tools=tools_config(ctx))
    application = create_app(lm, runtime=runtime, trust=trust)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/"
    if as_json:
        emit(True, {"url": url, "api": f"{url}api", "gateway": f"{url}v1"})
    else:
        click.echo(f"loomdb: serving on {url} (Ctrl-C stops)", err=True)
    embed_behind(ctx)  # new entries embedded behind the writes
    # what is loaded by now lives as long as the server: out of the cyclic collector's
    # full passes, which a long history's objects would set off on a client's request
    gc.collect()
    gc.freeze()
    # an open page holds a live-update stream: Ctrl-C ends it after a few seconds
    # rather than waiting for every page to go away
    uvicorn.run(application, host=host, port=port, log_level="warning",
                timeout_graceful_shutdown=3)


@user_app.command("add")
@argument("name")
@JSON
@click.pass_context
def user_add(ctx: click.Context, name: str, as_json: bool) -> None:
    """Create a user and print their token (shown this once; only its hash is stored)."""
    lm = loom(ctx)
    user, token = lm.as_(lm.operator).users.add(name)
    emit(as_json, {**user.to_json(), "token": token}, token)


@user_app.command("token")
@argument("name")
@JSON
@click.pass_context
def user_token(ctx: click.Context, name: str, as_json: bool) -> None:
    """Give a user a new token and print it (shown this once); the old one stops working,
    and their trees, documents and collections stay theirs."""
    lm = loom(ctx)
    user, token = lm.as_(lm.operator).users.rotate(name)
    emit(as_json, {**user.to_json(), "token": token}, token)


@user_app.command("list")
@JSON
@click.pass_context
def user_list(ctx: click.Context, as_json: bool) -> None:
    """List users (never their tokens)."""
    lm = loom(ctx)
    found = lm.as_(lm.operator).users.list()
    emit(as_json, {"users": [u.to_json() for u in found]},
         "\n".join(f"{u.name}\t{u.created_at}" for u in found) or "no users")


@user_app.command("remove")
@argument("name")
@JSON
@click.pass_context
def user_remove(ctx: click.Context, name: str, as_json: bool) -> None:
    """Delete a user; their trees stay in the store, visible to no one over HTTP."""
    lm = loom(ctx)
    lm.as_(lm.operator).users.remove(name)
    emit(as_json, {"deleted": name}, f"deleted {name}")
