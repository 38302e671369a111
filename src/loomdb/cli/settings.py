"""The files a command reads besides the store: providers.toml and tools.toml.

Both come through the configuration-trust rule (`loomdb.userconfig`): the file named
by `--providers` / `--tools` or `$LOOMDB_PROVIDERS` / `$LOOMDB_TOOLS`, else the store
folder's own when the user trusted that folder, else the user's configuration folder.
Shared by the command modules (`models`, `agents`, `serve`, `gateway`, `mcp`), so none
borrows it from another, and none reads a store folder's file any other way.
"""

from __future__ import annotations

from typing import Any

import click

from . import State


def _state(ctx: click.Context) -> State:
    state = ctx.find_object(State)
    assert state is not None
    return state


def providers_config(ctx: click.Context) -> Any:
    """The model aliases the user configured for this command's store."""
    from .. import userconfig

    state = _state(ctx)
    return userconfig.providers(state.settings, state.db)


def tools_config(ctx: click.Context) -> Any:
    """The programs a turn may run, as the user configured them for this command's store."""
    from .. import userconfig

    state = _state(ctx)
    return userconfig.tools(state.settings, state.db)
