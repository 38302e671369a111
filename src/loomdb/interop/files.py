"""What an import may read besides the export itself: the one door to a neighbour file.

A dataset may name files that go with it (ShareGPT's `images` and `audios`). Those
names are written by whoever made the file, so they are untrusted: read naively, an
entry such as `../../proc/self/environ`, `/home/me/.ssh/id_ed25519`, the store's own
`loom.db` or a symlink planted beside the dataset would copy a file of the machine
into a blob, and export hands it to whoever imported the dataset. So:

  * an upload (`files=None`: the HTTP import) reads no file of the server at all;
  * an import from the command line (or the library) reads only regular files
    inside the folder it was given, by default the dataset's own folder: a relative
    name, no `..`, no absolute path, and resolved (symlinks followed) it must still
    lie inside that folder;
  * a file inside a zip export is read from the zip only (see `stream.Input`).

Anything else is not read: the attachment stays "not in the export" and the import
report carries a warning naming the entry and why. A file that simply is not there
is no warning (datasets are often shared without their images).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path, PurePosixPath


class Beside:
    """The default place for neighbour files: the folder the export file is in."""

    def __repr__(self) -> str:
        return "BESIDE"


#: `files=BESIDE`: neighbour files come from the export's own folder
BESIDE = Beside()

#: the answer for a name: (bytes or None, None or why it was not read)
Neighbour = tuple[bytes | None, str | None]

_DRIVE = re.compile(r"^[A-Za-z]:")


def read_neighbour(folder: Path | None, name: str, max_bytes: int) -> Neighbour:
    """The bytes of the file `name` inside `folder`, under the rules of the module
    docstring: (bytes, None); (None, None) when there is no such file; (None, why)
    when it may not be read (never raises for a bad name)."""
    if folder is None:
        return None, "an uploaded export cannot name files on the server; not read"
    if not name or "\x00" in name:
        return None, "not a file name; not read"
    posix = name.replace("\\", "/")
    parts = PurePosixPath(posix).parts
    if posix.startswith(("/", "~")) or _DRIVE.match(posix):
        return None, _outside("an absolute path")
    if ".." in parts:
        return None, _outside("names a parent folder (..)")
    try:
        root = folder.resolve(strict=True)
        found = root.joinpath(*parts).resolve(strict=True)
    except FileNotFoundError:
        return None, None
    except (OSError, RuntimeError) as exc:  # a symlink loop, a permission
        return None, f"cannot be resolved ({type(exc).__name__}); not read"
    if not found.is_relative_to(root) or found == root:
        return None, _outside("leads outside the dataset's folder (a symlink)")
    return _read_regular(found, max_bytes)


def _read_regular(path: Path, max_bytes: int) -> Neighbour:
    """A regular file's bytes, at most `max_bytes` (a FIFO or device is refused
    without blocking; a file that grows while read is refused, not cut)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        return None, f"cannot be opened ({exc.strerror}); not read"
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):
            return None, "not a regular file; not read"
        if info.st_size > max_bytes:
            return None, _too_big(info.st_size, max_bytes)
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        return None, _too_big(len(data), max_bytes)
    return data, None


def _outside(why: str) -> str:
    return f"{why}; not read (only files inside the dataset's folder are)"


def _too_big(size: int, limit: int) -> str:
    return f"{size} bytes, over the blob limit of {limit} bytes; not read"


__all__ = ["BESIDE", "Beside", "Neighbour", "read_neighbour"]
