"""The store's files are its owner's alone: folders 0700, files 0600.

A store holds every conversation, and the users' token hashes; nobody else on the
machine has any business reading it. So everything loomdb creates for a store is made
private at creation (an explicit mode, whatever the process umask): the store folder,
`loom.db` (SQLite gives its `-wal` and `-shm` files the database file's mode), the
blob folders and files, exports and backups. A store made by an earlier version, or
copied in with looser modes, is tightened when it is opened: the folder, the database
and its WAL files, and the blob folder (which, at 0700, closes every blob under it);
only where the running account owns the file, so opening someone else's store
(read-only, shared on purpose) changes nothing of theirs.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

FOLDER = 0o700
FILE = 0o600
#: the permission bits of the group and of everyone else
OTHERS = 0o077


def restrict(path: Path) -> None:
    """Drop the group's and everyone else's permissions from `path` when the running
    account owns it (a symlink, or a file that is not there, is left alone)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode) or not hasattr(os, "getuid") or info.st_uid != os.getuid():
        return
    mode = stat.S_IMODE(info.st_mode)
    if mode & OTHERS:
        try:
            os.chmod(path, mode & ~OTHERS)
        except OSError:  # a read-only file system: opening it for reading still works
            pass


def folder(path: Path, *, parents: bool = True) -> Path:
    """A folder only its owner may enter: made 0700 when missing (its missing parents
    too, with the usual modes: they are the user's, not the store's), else tightened."""
    if parents:
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.mkdir(mode=FOLDER)
    except FileExistsError:
        pass
    restrict(path)
    return path


def folders(root: Path, *parts: str) -> Path:
    """`root/part/part...`, each made 0700 when missing (blob shards)."""
    path = root
    for part in ("", *parts):
        path = path / part if part else path
        if not path.is_dir():
            folder(path, parents=not part)
    return path


def file(path: Path) -> Path:
    """A file only its owner may read: made empty with 0600 when missing, else tightened."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE))
    except FileExistsError:
        restrict(path)
    except OSError:  # a folder it cannot be made in: the opener says what is wrong
        pass
    return path


def database(path: Path) -> None:
    """A SQLite database file and its WAL files, private (see the module docstring)."""
    file(path)
    for suffix in ("-wal", "-shm", "-journal"):
        restrict(Path(f"{path}{suffix}"))


__all__ = ["FILE", "FOLDER", "database", "file", "folder", "folders", "restrict"]
