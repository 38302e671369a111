"""What a Loom runs with besides its store: how to reach models, which tools an
agent's turn may run, the settings API keys are read from, one in-process model call
at a time.

One value, made at an edge (the CLI, the server's app factory, the gateway, the MCP
server, the demo) and held by the front door (`loomdb.Loom.runtime`), instead of a
`config` / `environ` / lock bundle handed through every layer. Its `settings` are the
ones the edge read from its environment (`loomdb.settings`); nothing below reads the
process's. A library program that opens a store itself gives it its own
(`loom.runtime = Runtime(...)`, or `loom.as_(caller, runtime=...)` for one caller);
the default reaches the built-in models with the store's own settings.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ..limits import Limits
from ..settings import NONE, Settings

if TYPE_CHECKING:
    from ..agents.config import ToolsConfig
    from ..providers.config import ProvidersConfig


@dataclass(frozen=True)
class Runtime:
    """How operations that call models or programs run."""

    #: the model aliases (providers.toml); None: the built-in models only
    config: ProvidersConfig | None = None
    #: what the edge read from its environment: API keys and a program's inherited
    #: variables come from its `environ` (default: none)
    settings: Settings = NONE
    #: the programs and MCP servers an agent's turn may run (tools.toml)
    tools: ToolsConfig | None = None
    #: callers may name only the aliases the operator serves (`[server] models`), and
    #: a thread's options may not redirect them: what an HTTP edge sets
    served_only: bool = False
    #: what such callers may send (None: the store's own `loom.limits`)
    limits: Limits | None = None
    #: one in-process model call at a time, shared by everything using this runtime
    model_lock: threading.Lock = field(default_factory=threading.Lock, compare=False)

    @property
    def environ(self) -> Mapping[str, str]:
        """Where API keys and a tool program's inherited variables are read."""
        return self.settings.environ

    def with_environ(self, environ: Mapping[str, str]) -> Runtime:
        """This runtime reading API keys and inherited variables from `environ`."""
        return replace(self, settings=replace(self.settings, environ=environ))

    def serving(self, limits: Limits | None = None) -> Runtime:
        """This runtime as an HTTP edge runs it: served aliases only, within `limits`
        (default: its own), the same lock."""
        return replace(self, served_only=True, limits=limits or self.limits)


__all__ = ["Runtime"]
