"""What a process is configured with from outside: one frozen value, made at an edge.

The environment is read in one place per edge (the `loomdb` command and its `serve`,
`gateway` and `mcp` commands, and `loomdb.open()` called without settings, the
library's entry point, which honours `$LOOMDB_URL` as documented), turned into a
`Settings` by `Settings.from_environ`, and passed down: `open_store(target,
settings)`, the Loom keeps it (`loom.settings`), and its `Runtime` reads API keys and a
tool program's inherited variables from it. No library module below an edge reads
`os.environ` (tests/test_environment_edges.py holds this), so a library program
decides everything a store, a model call or a tool process sees by the value it gives.

    LOOMDB_URL                 the store, when none is named (else LOOMDB_HOME)
    LOOMDB_HOME                the store folder, when no URL is set (else ./.loomdb)
    LOOMDB_SQLITE_SYNCHRONOUS  SQLite's durability when a URL does not say (`normal`)
    LOOMDB_BLOBS               a PostgreSQL store's blobs when its URL has no blobs=
    LOOMDB_MODEL_THREADS       CPU threads of in-process models (default: every core)
    LOOMDB_PROVIDERS           providers.toml (CLI; default: the user's, see userconfig)
    LOOMDB_TOOLS               tools.toml (CLI; default: the user's, see userconfig)
    XDG_CONFIG_HOME, HOME      the user's configuration folder: $XDG_CONFIG_HOME/loomdb,
                               else ~/.config/loomdb
    LOOMDB_ALLOW_HOSTS         more Host names `serve` and `gateway` answer
    LOOMDB_LIMIT_<NAME>        an input limit (loomdb.limits)
    NO_COLOR                   the CLI prints no colours
    (any other)                API keys (a model's `api_key_env`) and the PATH, HOME
                               and LANG a tool program inherits

`environ` is the mapping the edge read, kept as it is (the process's own mapping at
an edge, so an API key set later in the process is still found, as before); the
named settings are read from it once, when the value is made.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .limits import Limits

DEFAULT_HOME = ".loomdb"


@dataclass(frozen=True)
class Settings:
    """Everything loomdb takes from its environment, read once."""

    #: the variables API keys and a tool program's inherited PATH, HOME, LANG are read
    #: from (default: none, so a library program passes keys explicitly)
    environ: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}),
                                       compare=False, repr=False)
    #: $LOOMDB_URL: the store when none is named
    url: str | None = None
    #: $LOOMDB_HOME: the store folder when neither a store nor a URL is given
    home: str | None = None
    #: $LOOMDB_SQLITE_SYNCHRONOUS: SQLite's durability when the store's URL says none
    sqlite_synchronous: str = "normal"
    #: $LOOMDB_BLOBS: a PostgreSQL store's blobs when its URL has no `blobs=`
    blobs: str | None = None
    #: $LOOMDB_MODEL_THREADS as given (checked where a model loads: a bad value stops a
    #: generation with one line, not every command)
    model_threads: str | None = None
    #: $LOOMDB_PROVIDERS and $LOOMDB_TOOLS: the CLI's config files
    providers: str | None = None
    tools: str | None = None
    #: the user's configuration folder ($XDG_CONFIG_HOME/loomdb, else ~/.config/loomdb;
    #: None without either): their own providers.toml, tools.toml, config.toml and the
    #: store folders they trusted (`loomdb.userconfig`)
    config_home: str | None = None
    #: $LOOMDB_ALLOW_HOSTS: Host names a server answers besides loopback and its bind
    allow_hosts: tuple[str, ...] = ()
    #: $NO_COLOR: the CLI prints no colours
    no_color: bool = False

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Settings:
        """The settings an environment names; unset and empty variables keep defaults."""
        def get(name: str) -> str | None:
            value = environ.get(name)
            return value if value else None

        return cls(
            environ=environ,
            url=get("LOOMDB_URL"),
            home=get("LOOMDB_HOME"),
            sqlite_synchronous=get("LOOMDB_SQLITE_SYNCHRONOUS") or "normal",
            blobs=get("LOOMDB_BLOBS"),
            model_threads=environ.get("LOOMDB_MODEL_THREADS"),
            providers=environ.get("LOOMDB_PROVIDERS"),
            tools=environ.get("LOOMDB_TOOLS"),
            config_home=_config_home(environ),
            allow_hosts=tuple(h for h in re.split(r"[,\s]+", get("LOOMDB_ALLOW_HOSTS") or "")
                              if h),
            no_color=bool(environ.get("NO_COLOR")),
        )

    @property
    def location(self) -> str:
        """The store when none is named: $LOOMDB_URL, else $LOOMDB_HOME, else ./.loomdb."""
        return self.url or self.home or DEFAULT_HOME

    def limits(self, base: Limits | None = None) -> Limits:
        """`base` (default: the defaults) with every `LOOMDB_LIMIT_<NAME>` applied; a bad
        value is an InvalidInput naming the variable (so it is checked when asked for)."""
        return Limits.from_environ(self.environ, base)


def _config_home(environ: Mapping[str, str]) -> str | None:
    """$XDG_CONFIG_HOME/loomdb (an absolute one only, as the XDG spec says), else
    $HOME/.config/loomdb, else None."""
    xdg = environ.get("XDG_CONFIG_HOME") or ""
    if xdg.startswith("/"):
        return f"{xdg.rstrip('/')}/loomdb"
    home = environ.get("HOME") or ""
    return f"{home.rstrip('/')}/.config/loomdb" if home.startswith("/") else None


#: no environment at all: what a store opened by a library program without settings gets
NONE = Settings()

__all__ = ["DEFAULT_HOME", "NONE", "Settings"]
