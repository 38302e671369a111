"""The files a command reads besides the store: providers.toml and tools.toml.

Each is named by a setting (`$LOOMDB_PROVIDERS`, `$LOOMDB_TOOLS`, read with the rest of
the environment when the command starts), else found in the store folder. Shared by
the command modules (`models`, `agents`, `serve`, `gateway`, `mcp`), so none borrows
it from another.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from . import State, settings_of


def providers_config(ctx: click.Context) -> Any:
    """$LOOMDB_PROVIDERS, else providers.toml in the store folder, else the built-ins."""
    from ..api import load_providers

    path = settings_of(ctx).providers
    if path is None:
        state = ctx.find_object(State)
        db = state.db if state is not None else None
        if db and "://" not in db:
            path = str(Path(db) / "providers.toml")
    return load_providers(path)


def tools_config(ctx: click.Context) -> Any:
    """The programs a turn may run: $LOOMDB_TOOLS, else tools.toml in the store folder
    (beside providers.toml), else none."""
    from ..api import load_tools

    path = settings_of(ctx).tools
    if path is None:
        state = ctx.find_object(State)
        db = state.db if state is not None else None
        if db and "://" not in db:
            path = str(Path(db) / "tools.toml")
    return load_tools(path)
