"""Following a folder of agent session files as they are written (`loomdb watch DIR`).

    watcher = Watcher(loom, folder); watcher.step()  # one pass: import what changed

A pass lists the session files under the folder (a Claude Code projects folder, one
project's folder, or another agent's sessions folder), and imports each file whose size
or modification time changed since the last pass. Importing is the ordinary import, so
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
        self.seen: dict[Path, tuple[int, int]] = {}
        self.started: set[Path] = set()  # files seen holding a whole line

    def step(self) -> list[Imported]:
        """One pass: import every session whose files changed; what each import did."""
        owners: dict[Path, None] = {}
        for path, stamp in self._files():
            known = self.seen.get(path)
            if known == stamp:
                continue
            self.seen[path] = stamp
            if path not in self.started and _has_a_line(path):
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

    def _files(self) -> Iterator[tuple[Path, tuple[int, int]]]:
        count = 0
        base = len(self.folder.parts)
        for top, dirs, files in os.walk(self.folder, followlinks=False):
            if len(Path(top).parts) - base >= MAX_DEPTH:
                dirs[:] = []
            dirs.sort()
            for name in sorted(files):
                if not name.endswith(".jsonl"):
                    continue
                path = Path(top) / name
                try:
                    st = path.lstat()
                except OSError:
                    continue
                if not _is_regular(st.st_mode):
                    continue
                count += 1
                if count > MAX_FILES:
                    raise InvalidInput(str(self.folder), f"holds more than {MAX_FILES} session files")
                yield path, (st.st_size, st.st_mtime_ns)


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
