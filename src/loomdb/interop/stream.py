"""Reading export files without loading them whole: the one place that touches bytes.

An `Input` is a JSON or JSONL document, either a plain file or a member of an export
zip, plus access to the files next to it (attachments inside the zip, images beside a
dataset). Iteration is streamed with ijson (the array of conversations item by item)
or line by line for JSONL, so memory is bounded by the largest single conversation.
A file that ends early yields every good conversation first and then raises
`InvalidInput` naming the byte offset and the conversation index.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..errors import InvalidInput, MissingExtra
from ..limits import Limits

try:
    import ijson
except ImportError:  # pragma: no cover - depends on the installed extras
    ijson = None

_PEEK = 64 * 1024
_BOM = b"\xef\xbb\xbf"


class RecordingDict(dict):  # type: ignore[type-arg]
    """A dict that remembers keys seen twice in the JSON object it was built from."""

    __slots__ = ("duplicate_keys",)
    duplicate_keys: list[Any]

    def __setitem__(self, key: Any, value: Any) -> None:
        if key in self:
            try:
                self.duplicate_keys.append(key)
            except AttributeError:
                self.duplicate_keys = [key]
        dict.__setitem__(self, key, value)


def duplicate_keys(obj: Any) -> list[str]:
    return list(getattr(obj, "duplicate_keys", ()))


@dataclass
class Input:
    """One JSON/JSONL document to parse: a file, or `member` of the zip at `path`."""

    path: Path
    member: str | None = None
    _zip_names: list[str] | None = field(default=None, repr=False)
    #: the store's input limits, set by the importer (the defaults until then)
    limits: Limits = field(default_factory=Limits, repr=False)

    @property
    def name(self) -> str:
        return f"{self.path.name}:{self.member}" if self.member else self.path.name

    @contextmanager
    def open(self) -> Iterator[IO[bytes]]:
        try:
            if self.member is None:
                with open(self.path, "rb") as fh:
                    yield fh
            else:
                with zipfile.ZipFile(self.path) as zf, zf.open(self.member) as fh:
                    yield fh
        except FileNotFoundError:
            raise InvalidInput(str(self.path), "no such file") from None
        except IsADirectoryError:
            raise InvalidInput(str(self.path), "is a directory, not an export file") from None
        except (zipfile.BadZipFile, KeyError) as exc:
            raise InvalidInput(self.name, f"cannot read the zip: {exc}") from None

    def peek(self, size: int = _PEEK) -> bytes:
        with self.open() as fh:
            return fh.read(size)

    def zip_names(self) -> list[str]:
        """Every file in the export zip (empty for a plain file)."""
        if self.member is None:
            return []
        if self._zip_names is None:
            with zipfile.ZipFile(self.path) as zf:
                self._zip_names = [n for n in zf.namelist() if not n.endswith("/")]
        return self._zip_names

    def read_zip_member(self, name: str) -> bytes:
        with zipfile.ZipFile(self.path) as zf:
            return zf.read(name)

    def read_beside(self, relative: str, max_bytes: int = 64 * 1024 * 1024) -> bytes | None:
        """Bytes of a file named relative to the document (in the zip, or on disk)."""
        rel = relative.replace("\\", "/").lstrip("/")
        if self.member is not None:
            base = os.path.dirname(self.member)
            wanted = os.path.normpath(os.path.join(base, rel)).replace("\\", "/")
            return self.read_zip_member(wanted) if wanted in self.zip_names() else None
        candidate = (self.path.parent / rel).resolve()
        if not candidate.is_file() or candidate.stat().st_size > max_bytes:
            return None
        return candidate.read_bytes()


def json_stream() -> Any:
    """The ijson module, or MissingExtra saying how to install it."""
    if ijson is None:
        raise MissingExtra("streaming JSON import", "interop")
    return ijson


def as_input(source: str | os.PathLike[str] | Input) -> Input:
    return source if isinstance(source, Input) else Input(Path(source))


def first_char(data: bytes) -> str:
    """The first significant character of a JSON text ('' if there is none)."""
    text = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    return chr(text[0]) if text else ""


def iter_documents(inp: Input, *, map_type: type = dict) -> Iterator[tuple[int, Any]]:
    """(index, value) for each item of a top-level array, or (0, value) for one object."""
    kind = first_char(inp.peek(4096))
    if kind == "":
        raise InvalidInput(inp.name, "the file is empty")
    if kind not in "[{":
        raise InvalidInput(inp.name, "not JSON: expected an array or an object")
    prefix = "item" if kind == "[" else ""
    stream = json_stream()
    with inp.open() as fh:
        counted = CountingReader(fh)
        index = -1
        try:
            for index, value in enumerate(
                stream.items(counted, prefix, map_type=map_type, use_float=True)
            ):
                yield index, value
        except stream.JSONError as exc:
            raise _broken(inp, counted.offset, index + 1, kind == "[", exc) from None


def _broken(inp: Input, offset: int, index: int, is_array: bool, exc: Exception) -> InvalidInput:
    reason = str(exc).splitlines()[0]
    which = f"conversation index {index}" if is_array else "the document"
    truncated = "premature EOF" in reason
    what = "truncated" if truncated else "malformed"
    return InvalidInput(
        f"{inp.name} at or before byte {offset}",
        f"JSON is {what} in {which} ({reason}); {index if is_array else 0} conversation(s) read before it",
    )


class CountingReader(io.RawIOBase):
    """Counts the bytes the JSON parser has consumed (to name where a file breaks),
    and drops a UTF-8 byte order mark, which the JSON parser would refuse."""

    def __init__(self, fh: IO[bytes]) -> None:
        self._fh = fh
        self.offset = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        data = self._fh.read(size)
        if self.offset == 0 and data.startswith(_BOM):
            self.offset = len(_BOM)
            data = data[len(_BOM) :]
        self.offset += len(data)
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def iter_lines(inp: Input) -> Iterator[tuple[int, Any | InvalidInput]]:
    """(line number, value) for each JSONL line; a bad line yields its InvalidInput.

    A last line that does not parse and has no newline is a truncated file: that
    raises instead, after every good line was yielded.
    """
    with inp.open() as fh:
        offset = 0
        for lineno, raw in enumerate(fh, start=1):
            start, offset = offset, offset + len(raw)
            if not raw.strip():
                continue
            try:
                yield lineno, json.loads(raw)
            except (ValueError, UnicodeDecodeError) as exc:
                error = InvalidInput(f"{inp.name} line {lineno} (byte {start})", f"not JSON: {exc}")
                if not raw.endswith(b"\n"):
                    raise InvalidInput(
                        f"{inp.name} line {lineno} (byte {start})",
                        f"the file is truncated: the last line is incomplete JSON ({exc})",
                    ) from None
                yield lineno, error


def line_offsets(inp: Input) -> Iterator[tuple[int, int, bytes]]:
    """(line number, byte offset, raw line) of every non-blank line, streamed."""
    with inp.open() as fh:
        offset = 0
        for lineno, raw in enumerate(fh, start=1):
            if raw.strip():
                yield lineno, offset, raw
            offset += len(raw)


def read_lines_at(inp: Input, offsets: list[int]) -> Iterator[bytes]:
    """The lines starting at the given byte offsets (ascending), reading the file once."""
    with inp.open() as fh:
        position = 0
        for offset in offsets:
            if offset < position or inp.member is None:
                fh.seek(offset)
            else:
                _skip(fh, offset - position)
            line = fh.readline()
            position = offset + len(line)
            yield line


def _skip(fh: IO[bytes], count: int) -> None:
    while count > 0:
        chunk = fh.read(min(count, 1 << 20))
        if not chunk:
            return
        count -= len(chunk)
