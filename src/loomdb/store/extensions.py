"""SQLite loadable extensions, for the areas that need one (sqlite-vec for semantic
search). An area names its extensions (`Area.extensions`); the seam loads them on the
calling thread's connection before the area's first unit there, and the backend loads
them on every connection it opens after that. A store whose areas never ask never
loads anything, so the package that ships an extension stays optional.

Some Python builds leave out `Connection.load_extension`. There the extension is
registered with SQLite itself (`sqlite3_auto_extension`, through ctypes, on the
library the `sqlite3` module is linked to), which puts it in every connection opened
afterwards in the process; a connection opened before is reopened by the backend.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InvalidInput

if TYPE_CHECKING:
    import ctypes


@dataclass(frozen=True)
class Extension:
    """A loadable extension: `locate` returns its shared library's path (with or
    without the platform suffix) and raises `MissingExtra` when the package that ships
    it is not installed; `entry` is its init function."""

    name: str
    locate: Callable[[], str]
    entry: str


_registered: dict[str, ctypes.CDLL] = {}  # (ctypes is imported when one is registered)
_lock = threading.Lock()


def load(db: sqlite3.Connection, ext: Extension) -> bool:
    """Load `ext` into `db`; False when `db` cannot take it and must be reopened (it
    was registered for every connection opened from now on)."""
    enable = getattr(db, "enable_load_extension", None)
    if enable is not None:
        enable(True)
        try:
            db.load_extension(ext.locate())
        finally:
            enable(False)
        return True
    register(ext)
    return False


def register(ext: Extension) -> None:
    """Put `ext` in every SQLite connection this process opens from now on (once)."""
    with _lock:
        if ext.name in _registered:
            return
        import ctypes

        lib = ctypes.CDLL(_library(ext.locate()))
        init = getattr(lib, ext.entry, None)
        if init is None:
            raise InvalidInput(f"extension {ext.name}", f"has no entry point {ext.entry}")
        import _sqlite3

        api = ctypes.CDLL(_sqlite3.__file__)  # its symbols resolve in the linked SQLite
        auto = getattr(api, "sqlite3_auto_extension", None)
        if auto is None or auto(ctypes.cast(init, ctypes.c_void_p)) != 0:
            raise InvalidInput(f"extension {ext.name}",
                               "this Python's SQLite can load no extension")
        _registered[ext.name] = lib  # kept: the library must stay mapped


def _library(path: str) -> str:
    for suffix in ("", ".so", ".dylib", ".dll"):
        if Path(path + suffix).is_file():
            return path + suffix
    raise InvalidInput("extension", f"no shared library at {path}")
