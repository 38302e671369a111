"""Configuration trust: where a command's programs and provider endpoints come from.

A store folder is data. It arrives inside a cloned repository or an archive as easily
as it is made on the user's own disk, so what it holds must never decide which
programs run as the user (`tools.toml`) or which server receives an API key
(`providers.toml`). Every edge (the CLI's commands, `serve`, `gateway`, `mcp`, the
agents' hooks) reads those two files through `providers` and `tools` here, and nowhere
else. The first of these that exists is read:

1. the file named explicitly: `--providers` / `--tools`, else `$LOOMDB_PROVIDERS` /
   `$LOOMDB_TOOLS`;
2. the store folder's own file, only when the user trusted that folder (`loomdb trust
   DIR` records its resolved path in `trusted.toml`, as git's `safe.directory`); in a
   folder not trusted, the file is refused with one line saying how to trust it;
3. the user's configuration folder, `$XDG_CONFIG_HOME/loomdb/` else `~/.config/loomdb/`;
4. nothing: the built-in models, no programs.

Every file read here (those two, `config.toml`, `trusted.toml`) must be a regular file
owned by the user and writable by no one else; anything else is refused in one line
(the check is made on the open file, so a swap after the check reads nothing). A
provider's `api_key_env` may name only a variable the user allowed: `api_key_env` in
`config.toml`, shell patterns, default `["*_API_KEY"]`; any other is refused with one
line naming the variable, so no configuration sends `AWS_SECRET_ACCESS_KEY` anywhere.

    # ~/.config/loomdb/config.toml
    api_key_env = ["*_API_KEY", "VLLM_TOKEN"]

    # ~/.config/loomdb/trusted.toml (written by `loomdb trust`)
    folders = ["/home/me/notes/.loomdb"]
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import tomllib
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from .agents.config import ToolsConfig, parse_tools
from .errors import InvalidInput
from .providers.config import ProvidersConfig, builtin_models, parse_config
from .settings import Settings

#: the variables a provider's key may come from unless the user says otherwise
DEFAULT_KEY_PATTERNS = ("*_API_KEY",)
CONFIG = "config.toml"
TRUSTED = "trusted.toml"


def read_toml(path: Path) -> dict[str, Any] | None:
    """The TOML at `path` (None when there is none), read only when it is a regular file
    owned by this user that no one else may write; else one InvalidInput naming it."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise InvalidInput(str(path), f"cannot be read: {getattr(exc, 'strerror', exc)}",
                           ) from None
    try:
        _check_owned(path, os.fstat(fd))
        with os.fdopen(os.dup(fd), "rb") as file:
            raw = file.read()
    except OSError as exc:
        raise InvalidInput(str(path), f"cannot be read: {exc.strerror}") from None
    finally:
        os.close(fd)
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInput(str(path), f"not valid TOML: {exc}") from None
    return data


def _check_owned(path: Path, info: os.stat_result) -> None:
    """Configuration is the user's own: a regular file, theirs, not group/world-writable."""
    if not stat.S_ISREG(info.st_mode):
        raise InvalidInput(str(path), "is not a regular file; configuration is read from files")
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    if uid is not None and info.st_uid != uid:
        raise InvalidInput(str(path), f"is owned by another user (uid {info.st_uid}), not "
                                      "you: configuration is read only from your own files")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise InvalidInput(str(path), "is writable by others: configuration is read only "
                                      f"from files only you can change (chmod go-w {path})")


def folder(settings: Settings) -> Path | None:
    """The user's configuration folder (`Settings.config_home`), if any."""
    return Path(settings.config_home) if settings.config_home else None


# == trusted store folders =========================================================
def trusted(settings: Settings) -> list[str]:
    """The store folders the user trusted, as recorded (resolved paths)."""
    home = folder(settings)
    data = read_toml(home / TRUSTED) if home else None
    if data is None:
        return []
    found = data.get("folders", [])
    if set(data) - {"folders"} or not isinstance(found, list) or not all(
            isinstance(f, str) for f in found):
        raise InvalidInput(str(home / TRUSTED) if home else TRUSTED,
                           "must hold only `folders`, a list of folder paths")
    return list(found)


def _resolved(path: str | Path) -> str:
    """The path with every symlink followed, as it is now."""
    try:
        return os.path.realpath(path)
    except (OSError, ValueError) as exc:
        raise InvalidInput(str(path), f"cannot be resolved: {exc}") from None


def is_trusted(settings: Settings, store: str | Path) -> bool:
    """Whether the store folder, resolved (symlinks followed now), is one the user trusted."""
    return _resolved(store) in {os.path.normpath(f) for f in trusted(settings)}


def trust(settings: Settings, store: str | Path) -> str:
    """Record the folder's resolved path as trusted; answers that path."""
    where = _resolved(store)
    if not os.path.isdir(where):
        raise InvalidInput(str(store), "is not a folder")
    if "\n" in where or "\r" in where:
        raise InvalidInput(str(store), "a folder with a line break in its path cannot be trusted")
    known = trusted(settings)
    if where not in known:
        _write_trusted(settings, [*known, where])
    return where


def untrust(settings: Settings, store: str | Path) -> str:
    """Forget a trusted folder (given as recorded, or as a path that resolves to it)."""
    known = trusted(settings)
    for given in (os.path.normpath(store), _resolved(store)):
        if given in known:
            _write_trusted(settings, [f for f in known if f != given])
            return given
    raise InvalidInput(str(store), "is not a trusted folder (see `loomdb trust --list`)")


def _write_trusted(settings: Settings, folders: list[str]) -> None:
    home = folder(settings)
    if home is None:
        raise InvalidInput("trust", "no configuration folder: set HOME or XDG_CONFIG_HOME")
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    lines = ["# store folders whose providers.toml and tools.toml loomdb reads (loomdb trust)",
             "folders = [", *(f"  {json.dumps(f)}," for f in folders), "]", ""]
    temp = home / f".{TRUSTED}.{os.getpid()}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write("\n".join(lines))
    os.replace(temp, home / TRUSTED)


# == the two files ===================================================================
def key_patterns(settings: Settings) -> tuple[str, ...]:
    """The variables a provider's `api_key_env` may name (`api_key_env` of config.toml)."""
    home = folder(settings)
    data = read_toml(home / CONFIG) if home else None
    if data is None or "api_key_env" not in data:
        return DEFAULT_KEY_PATTERNS
    patterns = data["api_key_env"]
    if not isinstance(patterns, list) or not all(isinstance(p, str) and p for p in patterns):
        raise InvalidInput(f"{home / CONFIG if home else CONFIG}: api_key_env",
                           "must be a list of variable name patterns")
    return tuple(patterns)


def _source(settings: Settings, store: str | None, named: str | None,
            name: str, flag: str) -> Path | None:
    """Which file to read, by the order of the module docstring (None: none exists)."""
    if named:
        return Path(named)
    if store and "://" not in store and (Path(store) / name).exists():
        if not is_trusted(settings, store):
            raise InvalidInput(str(Path(store) / name),
                               "is in a store folder you have not trusted, so it is not "
                               f"read: run `loomdb trust {shlex.quote(store)}` if the folder is yours, "
                               f"or name a file with --{flag}")
        # the folder as resolved when it was found trusted: a symlink changed later
        # leads nowhere else
        return Path(_resolved(store)) / name
    home = folder(settings)
    return home / name if home is not None and (home / name).exists() else None


def providers(settings: Settings, store: str | None = None) -> ProvidersConfig:
    """The model aliases the user configured for a command on `store` (a folder or URL)."""
    path = _source(settings, store, settings.providers, "providers.toml", "providers")
    data = read_toml(path) if path is not None else None
    if path is None or data is None:
        return ProvidersConfig(models=builtin_models(), path=path)
    config = parse_config(data, str(path))
    allowed = key_patterns(settings)
    for name, spec in config.models.items():
        variable = spec.api_key_env
        if variable and not any(fnmatchcase(variable, p) for p in allowed):
            raise InvalidInput(
                f"{path}: models.{name}.api_key_env",
                f"{variable} is not a variable an API key may be read from (allowed: "
                f"{', '.join(allowed)}; add it to api_key_env in your {CONFIG})")
    return ProvidersConfig(models=config.models, default=config.default, path=path,
                           served=config.served, names=config.names)


def tools(settings: Settings, store: str | None = None) -> ToolsConfig:
    """The programs and MCP servers the user configured for a command on `store`."""
    path = _source(settings, store, settings.tools, "tools.toml", "tools")
    data = read_toml(path) if path is not None else None
    if path is None or data is None:
        return ToolsConfig(path=path)
    config = parse_tools(data, str(path), path.resolve().parent)
    return ToolsConfig(config.tools, config.servers, path)


__all__ = ["DEFAULT_KEY_PATTERNS", "is_trusted", "key_patterns", "providers", "read_toml",
           "tools", "trust", "trusted", "untrust"]
