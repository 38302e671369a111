"""Finding an export's format from its structure, and opening it (plain file or zip).

`open_source` looks inside the file rather than trusting its name: the first record
of an array or of a JSONL file, or the top-level keys of a single object (read as a
stream and stopped as soon as one key decides), judged by every format of the registry
(`formats`). Export zips are opened at their `conversations.json` (ChatGPT and Claude)
or their only JSON/JSONL file. A folder is an agent's folder (a Claude Code project or
projects folder, Codex or pi sessions) when its session files say so.
`parse_file` ties it together: path in, conversations (or ParseErrors) out.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Iterator
from pathlib import Path

from ..errors import InvalidInput
from ..limits import DEFAULT, Limits
from .files import BESIDE, Beside
from .formats import AGENTS, DECISIVE_KEYS, FOLDER_SAMPLE, FORMATS, REGISTRY, knows
from .model import ImportedConversation, ParseError
from .sniff import Head
from .stream import Input

__all__ = ["FORMATS", "detect", "open_source", "parse_file"]


def parse_file(
    path: str | os.PathLike[str], format: str = "auto", *,
    files: Path | Beside | None = BESIDE, limits: Limits = DEFAULT,
) -> Iterator[ImportedConversation | ParseError]:
    """Every conversation of an export file, as ImportedConversation or ParseError.
    `files`: where files it names may be read from (see `loomdb.interop.files`)."""
    if format == "auto":
        fmt, inp = open_source(path, files=files, limits=limits)
    elif format in FORMATS:
        fmt, inp = format, _document(Path(path), files, limits)
    else:
        raise InvalidInput(
            "format", f"unknown format {format!r}; supported: auto, {', '.join(FORMATS)}"
        )
    return FORMATS[fmt](inp)


def open_source(
    path: str | os.PathLike[str], *, files: Path | Beside | None = BESIDE,
    limits: Limits = DEFAULT,
) -> tuple[str, Input]:
    """(format name, the document to parse) for an export file, judged by its content."""
    inp = _document(Path(path), files, limits)
    return detect(inp), inp


def detect(inp: Input) -> str:
    """The name of the format of a document (or folder), judged by every format's
    `sniff` of its start; the most confident wins (see `formats`)."""
    if inp.member is None and inp.path.is_dir():
        return _detect_folder(inp)
    head = Head(inp, DECISIVE_KEYS, knows)
    if not head.raw.strip():
        raise InvalidInput(inp.name, "the file is empty")
    found = sniffed(head)
    if found is not None:
        return found
    if head.kind not in ("{", "["):
        raise InvalidInput(inp.name, "not JSON or JSONL; " + _supported())
    raise InvalidInput(inp.name, "unknown export format; " + _supported())


def sniffed(head: Head) -> str | None:
    """The most confident format for `head` (the first in the registry on a tie)."""
    best, name = 0.0, None
    for fmt in REGISTRY:
        confidence = fmt.confidence(head)
        if confidence > best:
            best, name = confidence, fmt.name
    return name


def _supported() -> str:
    return "supported formats: " + ", ".join(FORMATS)


def _document(path: Path, files: Path | Beside | None = BESIDE,
              limits: Limits = DEFAULT) -> Input:
    shown = str(path) if len(str(path)) <= 200 else str(path)[:200] + "..."
    try:
        found, folder = path.exists(), path.is_dir()
    except OSError as exc:  # a name too long for the system, a loop of links
        raise InvalidInput(shown, f"cannot be read ({exc.strerror or exc})") from None
    if not found:
        raise InvalidInput(shown, "no such file")
    if folder:
        return Input(path, None, files, limits)  # a folder of session files (see `_detect_folder`)
    if not zipfile.is_zipfile(path):
        return Input(path, None, files, limits)
    try:
        with zipfile.ZipFile(path) as zf:
            names = [n for n in zf.namelist() if not n.endswith("/")]
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise InvalidInput(path.name, f"cannot read the zip: {exc}") from None
    exports = sorted((n for n in names if os.path.basename(n) == "conversations.json"), key=len)
    documents = [
        n
        for n in names
        if n.endswith((".json", ".jsonl")) and not os.path.basename(n).startswith(".")
    ]
    if exports:
        return Input(path, exports[0], files, limits)
    if len(documents) == 1:
        return Input(path, documents[0], files, limits)
    raise InvalidInput(
        path.name, "the zip holds no conversations.json (nor a single JSON/JSONL file)"
    )


def _detect_folder(inp: Input) -> str:
    """The format of a folder of session files: the first agent format (in registry
    order) one of whose session files in the folder is told to be its own."""
    found = agent_folder(inp.path, inp.limits)
    if found is not None:
        return found
    kinds = ", ".join(f"a {f.cli} folder" for f in AGENTS)
    raise InvalidInput(str(inp.path), "is a directory holding no session files it can read; "
                       f"give an export file, or {kinds}")


def agent_folder(path: Path, limits: Limits = DEFAULT) -> str | None:
    """The agent format whose session files `path` holds, or None."""
    for fmt in AGENTS:
        assert fmt.sessions is not None
        for file in fmt.sessions(path)[:FOLDER_SAMPLE]:
            try:
                if sniffed(Head(Input(file, limits=limits), DECISIVE_KEYS, knows)) == fmt.name:
                    return fmt.name
            except (InvalidInput, OSError):
                continue
    return None
