"""Reading export files without loading them whole: the one place that touches bytes.

An `Input` is a JSON or JSONL document, either a plain file or a member of an export
zip, plus access to the files next to it (attachments inside the zip, images beside a
dataset). Iteration is streamed with ijson (the array of conversations item by item)
or line by line for JSONL, so memory is bounded by the largest single conversation.
A file that ends early yields every good conversation first and then raises
`InvalidInput` naming the byte offset and the conversation index.

Every byte read is bounded by the input's `limits` (`loomdb.limits`): the JSON passes
a depth scan before the parser sees it (`loomdb.jsondepth`: ijson names every event
by its path, so nesting alone would cost memory in the square of the file's size); a
zip member is refused when its header declares more than `zip_member` bytes and cut
off when it yields more than that (or than what is left of `zip_total`, the budget of
the whole archive); files beside a dataset are read only through `files.read_neighbour`.
"""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from zlib import error as zlib_error

from .. import jsondepth
from ..errors import InvalidInput, TooLarge
from ..limits import DEFAULT, Limits
from . import budget
from .events import json_stream as json_stream
from .events import values
from .files import BESIDE, Beside, Neighbour, read_neighbour

_PEEK = 64 * 1024
_BOM = b"\xef\xbb\xbf"
#: the nesting an export's own framing adds around the values it holds (a ChatGPT
#: conversation's `mapping.<id>.message.content.parts`, a native export's
#: `trees[].nodes[].content`): a document may nest this much deeper than a value
FRAMING = 8
#: a format whose nesting grows with the conversation (socketteer/loom saves, two levels
#: a turn) may nest this many times `json_depth` (32768 levels by default), read by
#: `events.values`, whose cost grows only linearly with the depth
DEEP = 512


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


class ZipBudget:
    """What the members of one zip archive have yielded so far, against `zip_total`
    (a member read again, the document by each pass over it, counts once)."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.used = 0
        self._by_member: dict[str, int] = {}

    def left(self, member: str) -> int:
        return self.total - self.used + self._by_member.get(member, 0)

    def take(self, member: str, count: int) -> None:
        before = self._by_member.get(member, 0)
        if count > before:
            self._by_member[member] = count
            self.used += count - before


class _Capped(io.RawIOBase):
    """A zip member's stream that refuses (TooLarge) to yield more than its caps:
    never trust the header, count what comes out."""

    def __init__(self, fh: IO[bytes], name: str, member: str, cap: int,
                 budget: ZipBudget) -> None:
        self._fh = fh
        self._name = name
        self._member = member
        self._cap = cap
        self._budget = budget
        self._count = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        limit = min(self._cap, self._budget.left(self._member)) - self._count
        want = limit + 1 if size is None or size < 0 else min(size, limit + 1)
        data = self._fh.read(want)
        self._count += len(data)
        if len(data) > limit:
            raise TooLarge(self._name, "the zip member yields more than the zip limits "
                           f"allow (zip_member {self._cap} bytes, zip_total "
                           f"{self._budget.total} bytes); nothing more was read")
        self._budget.take(self._member, self._count)
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._fh.close()
        super().close()


@dataclass
class Input:
    """One JSON/JSONL document to parse: a file, or `member` of the zip at `path`.

    `files` is where the files it names may be read from (`files.read_neighbour`):
    BESIDE (the export's own folder), another folder, or None (nowhere: an upload).
    Inside a zip they come from the zip. `limits` bounds every read."""

    path: Path
    member: str | None = None
    files: Path | Beside | None = BESIDE
    limits: Limits = DEFAULT
    _zip_names: list[str] | None = field(default=None, repr=False)
    budget: ZipBudget | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.budget is None:
            self.budget = ZipBudget(self.limits.zip_total)

    @property
    def name(self) -> str:
        return f"{self.path.name}:{self.member}" if self.member else self.path.name

    @property
    def folder(self) -> Path | None:
        """The folder neighbour files come from (None: none may be read)."""
        return self.path.parent if isinstance(self.files, Beside) else self.files

    def depth(self, deep: bool = False) -> int:
        """How deeply the document may nest: a value's limit plus the export's framing;
        `deep` for a reader linear in the depth (`events`): `DEEP` times as much."""
        return self.limits.json_depth * DEEP if deep else self.limits.json_depth + FRAMING

    @contextmanager
    def open(self) -> Iterator[IO[bytes]]:
        try:
            if self.member is None:
                with open(self.path, "rb") as fh:
                    yield fh
            else:
                with zipfile.ZipFile(self.path) as zf:
                    with self._open_member(zf, self.member) as fh:
                        yield fh
        except FileNotFoundError:
            raise InvalidInput(str(self.path), "no such file") from None
        except IsADirectoryError:
            raise InvalidInput(str(self.path), "is a directory, not an export file") from None
        except (zipfile.BadZipFile, KeyError, EOFError, NotImplementedError,
                zlib_error) as exc:
            raise InvalidInput(self.name, f"cannot read the zip: {exc}") from None

    def _open_member(self, zf: zipfile.ZipFile, member: str) -> IO[bytes]:
        """A member's stream, refused by its declared size and capped by its actual one."""
        info = zf.getinfo(member)
        cap = self.limits.zip_member
        where = f"{self.path.name}:{member}"
        if info.file_size > cap:
            raise TooLarge(where, f"the zip member declares {info.file_size} bytes, over the "
                           f"zip_member limit of {cap} bytes; nothing was read")
        assert self.budget is not None
        if info.file_size > self.budget.left(member):
            raise TooLarge(where, f"the zip's members declare more than the zip_total limit "
                           f"of {self.budget.total} bytes; nothing more was read")
        return io.BufferedReader(_Capped(zf.open(info), where, member, cap, self.budget))

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
        """A member's bytes, within the zip limits and the blob limit (else TooLarge)."""
        try:
            with zipfile.ZipFile(self.path) as zf, self._open_member(zf, name) as fh:
                data = fh.read(self.limits.blob + 1)
        except (zipfile.BadZipFile, KeyError, EOFError, NotImplementedError,
                zlib_error) as exc:
            raise InvalidInput(f"{self.path.name}:{name}", f"cannot read the zip: {exc}") from None
        if len(data) > self.limits.blob:
            raise TooLarge(f"{self.path.name}:{name}",
                           f"over the blob limit of {self.limits.blob} bytes")
        return data

    def read_beside(self, relative: str) -> Neighbour:
        """A file named relative to the document: from the zip when the document is in
        one, else from `folder` under the rules of `files.read_neighbour`.
        (bytes, None), (None, None) when absent, or (None, why it was not read)."""
        if self.member is None:
            return read_neighbour(self.folder, relative, self.limits.blob)
        rel = relative.replace("\\", "/")
        parts = rel.split("/")
        if rel.startswith("/") or ".." in parts:
            return None, "names a file outside the export's folder in the zip; not read"
        base = os.path.dirname(self.member)
        wanted = os.path.normpath(os.path.join(base, rel)).replace("\\", "/")
        if wanted not in self.zip_names():
            return None, None
        return self.read_zip_member(wanted), None

    def reader(self, fh: IO[bytes], deep: bool = False) -> CountingReader:
        """`fh` for the JSON parser: its offset counted and its depth bounded (see
        `depth`: `deep` only for the readers of `events`)."""
        return CountingReader(fh, self.depth(deep), self.name)


def as_input(source: str | os.PathLike[str] | Input) -> Input:
    """An Input for a path (files beside it readable, default limits), or as given."""
    return source if isinstance(source, Input) else Input(Path(source))


def first_char(data: bytes) -> str:
    """The first significant character of a JSON text ('' if there is none)."""
    text = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    return chr(text[0]) if text else ""


def iter_documents(
    inp: Input, *, map_type: type = dict, deep: bool = False
) -> Iterator[tuple[int, Any]]:
    """(index, value) for each item of a top-level array, or (0, value) for one object.
    `deep`: a format whose nesting grows with its content (see `DEEP`)."""
    kind = first_char(inp.peek(4096))
    if kind == "":
        raise InvalidInput(inp.name, "the file is empty")
    if kind not in "[{":
        raise InvalidInput(inp.name, "not JSON: expected an array or an object")
    prefix = "item" if kind == "[" else ""
    stream = json_stream()
    with inp.open() as fh:
        counted = inp.reader(fh, deep)
        index = -1
        if deep:
            found = values(counted, (prefix,) if prefix else (), map_type=map_type)
        else:
            found = stream.items(counted, prefix, map_type=map_type, use_float=True)
        try:
            for index, value in enumerate(found):
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
    drops a UTF-8 byte order mark, which the JSON parser would refuse, and refuses
    (TooDeep) a chunk that nests deeper than `depth` before the parser sees it."""

    def __init__(self, fh: IO[bytes], depth: int = DEFAULT.json_depth + FRAMING,
                 name: str = "JSON") -> None:
        self._fh = fh
        self.offset = 0
        self._scan = jsondepth.DepthScanner(depth, name)

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        budget.check()
        data = self._fh.read(size)
        if self.offset == 0 and data.startswith(_BOM):
            self.offset = len(_BOM)
            data = data[len(_BOM) :]
        self._scan.feed(data)
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
                yield lineno, loads(raw, inp.limits, f"byte {start}")
            except jsondepth.TooDeep as exc:
                yield lineno, exc
                continue
            except (ValueError, UnicodeDecodeError) as exc:
                error = InvalidInput(f"{inp.name} line {lineno} (byte {start})", f"not JSON: {exc}")
                if not raw.endswith(b"\n"):
                    raise InvalidInput(
                        f"{inp.name} line {lineno} (byte {start})",
                        f"the file is truncated: the last line is incomplete JSON ({exc})",
                    ) from None
                yield lineno, error


def loads(data: bytes | str, limits: Limits = DEFAULT, where: str = "JSON") -> Any:
    """`json.loads` of one value taken in from an import (a JSONL line, a JSON string
    inside a record), refusing (TooDeep) one nested deeper than `json_depth`."""
    return jsondepth.loads(data, limits.json_depth + FRAMING, where)


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
