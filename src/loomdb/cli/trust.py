"""`loomdb trust`: the store folders whose own providers.toml and tools.toml are read.

A store folder may come from anywhere (a cloned repository, an archive), so its
configuration is read only once its owner says so, as git's `safe.directory`: the
folder's resolved path is recorded in the user's configuration (`loomdb.userconfig`).
"""

from __future__ import annotations

import click

from ..errors import InvalidInput
from . import JSON, State, argument, emit, settings_of
from . import root as app


@app.command()
@argument("folder", required=False, metavar="[DIR]",
          help="The store folder (default: the store, --db or ./.loomdb).")
@click.option("--list", "listing", is_flag=True, help="List the trusted folders.")
@click.option("--remove", is_flag=True, help="Stop trusting DIR.")
@JSON
@click.pass_context
def trust(ctx: click.Context, folder: str | None, listing: bool, remove: bool,
          as_json: bool) -> None:
    """Trust a store folder: its providers.toml and tools.toml (which name the servers
    your API keys go to and the programs that run as you) are read from then on. Only
    for folders you made; the path is recorded resolved, so a symlink moved later does
    not carry the trust elsewhere."""
    from .. import userconfig

    given = settings_of(ctx)
    if listing:
        if folder is not None or remove:
            raise InvalidInput("--list", "takes no folder and no --remove")
        found = userconfig.trusted(given)
        emit(as_json, {"trusted": found}, "\n".join(found) or "no trusted folders")
        return
    if folder is None:
        state = ctx.find_object(State)
        folder = state.db if state is not None else None
        if not folder or "://" in folder:
            raise InvalidInput("DIR", "name the store folder to trust (the store is a URL)")
    if remove:
        gone = userconfig.untrust(given, folder)
        emit(as_json, {"removed": gone}, f"no longer trusted: {gone}")
    else:
        where = userconfig.trust(given, folder)
        emit(as_json, {"trusted": where}, f"trusted: {where}")
