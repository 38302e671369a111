"""Following a folder of agent session files as they are written (`loomdb watch DIR`).

    watcher = Watcher(loom, folder); watcher.step()  # one pass: import what changed

A pass lists the session files under the folder (a Claude Code projects folder, one
project's folder, or another agent's sessions folder) with one `lstat` each, and opens
only the files whose size or modification time changed since the last pass. Of such a
file it reads what was added since the last read stopped (its offset is kept): when
that holds no whole line yet, or nothing was added (only touched), nothing is imported;
a file that shrank, or whose first bytes changed (rewritten), is read whole again. A
file with new whole lines is imported. Importing is the ordinary import, so
it is idempotent: a file that grew adds only its new lines and its session moves to the
newest one; a last line still missing its newline is left for the next pass; a watch
started again imports every file once, which adds nothing that is already stored, and
so resumes where the last one stopped without a state file of its own.

`format` names the agents' format when detection should not judge each file (an
agent format of `formats.REGISTRY`); by default each file's lines say.

A change to a subagent's file imports the session that owns it (the session file of
its `subagents/` folder, or, for the 2.0.x layout, the session files beside it), since
a subagent's tree is written with its parent's.

The folder is walked without following symbolic links, to a bounded depth, and at most
`MAX_FILES` files are followed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from .claude_code import FORMAT, forks_last, session_files
from .formats import get
from .importer import import_file
from .report import ImportReport

if TYPE_CHECKING:
    from ..loom import Loom

#: how deep below the watched folder session files are looked for (Codex nests by date)
MAX_DEPTH = 6
MAX_FILES = 100_000


@dataclass
class Imported:
    """What one pass imported from one session file."""

    path: Path
    report: ImportReport | None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"file": str(self.path)}
        if self.report is not None:
            out.update(self.report.to_json())
        if self.error is not None:
            out["error"] = self.error
        return out


class Watcher:
    """Imports the session files under `folder` that changed since the last pass."""

    def __init__(self, loom: Loom, folder: str | os.PathLike[str], *,
                 on_spawn: Callable[[dict[str, Any]], None] | None = None,
                 format: str = "auto") -> None:
        self.loom = loom
        #: "auto" (each file's format told from its lines) or an agent format's name
        self.format = format if format == "auto" else get(format, agents_only=True).name
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise InvalidInput(str(folder), "is not a folder")
        self.on_spawn = on_spawn
        #: what the last pass saw of each file: (size, modification time) -> its state
        self.seen: dict[str, _Followed] = {}
        self.started: set[Path] = set()  # files seen holding a whole line

    def step(self) -> list[Imported]:
        """One pass: import every session whose files changed; what each import did."""
        owners: dict[Path, None] = {}
        for name, stamp in self._files():
            known = self.seen.get(name)
            if known is not None and known.stamp == stamp:
                continue
            path = Path(name)
            followed = known or _Followed()
            self.seen[name] = followed
            if not followed.moved(path, stamp) and known is not None:
                continue  # touched, or still no whole line after the last one
            if path not in self.started and followed.offset:
                self.started.add(path)
                if _in_project(path):
                    # a new session opening with summaries: its project imported whole,
                    # so they find the leaves they name in the other sessions
                    owners[path.parent] = None
                    continue
            for owner in _owners(path):
                owners[owner] = None
        for owner in [o for o in owners if o.is_file() and o.parent in owners]:
            del owners[owner]  # its project is imported whole in this pass
        return [self._import(owner) for owner in _forks_after(list(owners))]

    def _import(self, path: Path) -> Imported:
        if path.is_file() and not _has_a_line(path):
            return Imported(path, ImportReport())  # nothing whole to read yet
        try:
            report = import_file(self.loom, path, self.format, on_spawn=self.on_spawn,
                                 complete_only=True)
        except InvalidInput as exc:
            return Imported(path, None, str(exc))
        return Imported(path, report)

    def _files(self) -> Iterator[tuple[str, tuple[int, int]]]:
        """(path, (size, modification time)) of every session file, in name order: one
        directory listing per folder and one lstat per file, nothing opened."""
        count = 0
        stack = [(str(self.folder), 0)]
        while stack:
            top, depth = stack.pop()
            try:
                with os.scandir(top) as listing:
                    entries = sorted(listing, key=lambda e: e.name, reverse=True)
            except OSError:
                continue
            for entry in entries:  # (reversed: the stack gives them back in order)
                if entry.is_dir(follow_symlinks=False):
                    if depth + 1 < MAX_DEPTH:
                        stack.append((entry.path, depth + 1))
            for entry in reversed(entries):
                if not entry.name.endswith(".jsonl"):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if not _is_regular(st.st_mode):
                    continue
                count += 1
                if count > MAX_FILES:
                    raise InvalidInput(str(self.folder), f"holds more than {MAX_FILES} session files")
                yield entry.path, (st.st_size, st.st_mtime_ns)


#: how many first bytes of a file tell that it was rewritten rather than grown
HEAD = 4096


class _Followed:
    """What was read of one followed file: up to where (`offset`: the end of its last
    whole line), its first bytes then, and the (size, time) the last pass saw."""

    __slots__ = ("head", "offset", "stamp")

    def __init__(self) -> None:
        self.stamp: tuple[int, int] = (-1, -1)
        self.offset = 0
        self.head = b""

    def moved(self, path: Path, stamp: tuple[int, int]) -> bool:
        """Note `stamp`; does the file hold whole lines that were not read yet? Reads
        the bytes after `offset` (and the first ones, to tell a rewrite), or the whole
        file again when it shrank or its first bytes changed."""
        self.stamp = stamp
        try:
            with open(path, "rb") as fh:
                if self.offset and (stamp[0] < self.offset
                                    or fh.read(len(self.head)) != self.head):
                    self.offset, self.head = 0, b""  # rewritten: read whole again
                fh.seek(self.offset)
                end = self.offset
                while chunk := fh.read(1 << 20):
                    cut = chunk.rfind(b"\n")
                    if cut >= 0:
                        end = fh.tell() - len(chunk) + cut + 1
                if len(self.head) < HEAD and end > len(self.head):
                    fh.seek(0)
                    self.head = fh.read(min(HEAD, end))
        except OSError:
            return True  # gone or unreadable: the import says what it finds
        grown, self.offset = end > self.offset, end
        return grown


def _in_project(path: Path) -> bool:
    """A Claude Code session file in its project folder that starts with summary lines
    (which name leaves in the project's other sessions)."""
    import json

    from .detect import agent_folder

    if path.name.startswith("agent-"):
        return False
    with open(path, "rb") as fh:
        head = fh.readline(1 << 20)
    try:
        first = json.loads(head)
    except (ValueError, RecursionError):
        return False
    return (isinstance(first, dict) and first.get("type") == "summary"
            and agent_folder(path.parent) == FORMAT)


#: a Claude Code reply copied by `--fork-session` names the session it was asked in
_ASKED_IN = re.compile(rb'"requestSessionId"\s*:\s*"([A-Za-z0-9_.:-]{1,128})"')
#: how much of a session file is looked at for that (copied lines come first)
FORK_HEAD = 1 << 22


def _forks_after(paths: list[Path]) -> list[Path]:
    """The files of one pass in their order, except that a Claude Code session forked
    from another of them comes after it (so a first pass over a folder that holds both
    writes the fork as a branch of the original: `roundtrip`)."""
    sessions = [p for p in paths if p.is_file() and p.suffix == ".jsonl"]
    if len(sessions) < 2:
        return paths
    origins: dict[Path, list[str]] = {}
    for path in sessions:
        with open(path, "rb") as fh:
            head = fh.read(FORK_HEAD)
        origins[path] = sorted({m.decode() for m in _ASKED_IN.findall(head)} - {path.stem})
    return forks_last(paths, lambda p: p.stem, lambda p: origins.get(p, []))


def _has_a_line(path: Path) -> bool:
    """Does the file hold one whole line yet (its format can only be told from one)?"""
    with open(path, "rb") as fh:
        return b"\n" in fh.read(1 << 20) or path.stat().st_size > 1 << 20


def _is_regular(mode: int) -> bool:
    import stat

    return stat.S_ISREG(mode)


def _owners(path: Path) -> list[Path]:
    """The session file(s) to import for a changed file (itself, or a subagent's owner)."""
    if not path.name.startswith("agent-"):
        return [path]
    if path.parent.name == "subagents":
        owner = path.parent.parent.parent / (path.parent.parent.name + ".jsonl")
        return [owner] if owner.is_file() else []
    return session_files(path.parent)
