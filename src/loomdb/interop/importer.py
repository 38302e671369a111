"""The import driver: an export file in, every conversation written, a report out.

    import_file(loom, path, format="auto", stop_on_error=False, files=BESIDE,
                in_unit=None) -> ImportReport

It finds the format (loomdb's own export first, then the parsers of
`loomdb.interop.detect`), reads the file unit by unit and gives each unit to its
writer (`writer.write_conversation`, or `native.import_tree` for loomdb's own
export), each inside its own transaction: a unit that fails leaves nothing and
becomes an entry in `errors` while the others land. `in_unit(outcome)` runs inside
that transaction after the unit's writes, so what a caller records about them (the
HTTP import: whose trees they are) commits or rolls back with them.

Every read is bounded by `loom.limits` (see `stream`); `files` says where the files
an export names may be read from (`loomdb.interop.files`: the export's own folder by
default, None for an upload, which reads no file of the server).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..errors import InvalidInput, LoomError
from ..limits import DEFAULT, Limits
from ..storage_ops import storage
from . import budget, claude_code, codex, links, native
from .detect import FORMATS, _document, detect
from .files import BESIDE, Beside
from .formats import usage
from .model import EmptyConversation, ImportedConversation, ParseError
from .parts import Parts
from .report import ImportReport, Outcome
from .spawns import Written
from .stream import Input
from .writer import write_conversation

if TYPE_CHECKING:
    from ..loom import Loom

#: format names accepted by `import_file` (besides "auto"); `loomdb` is the native export
NATIVE = "loomdb"

Progress = Callable[[ImportReport, int, int], None]
#: run inside each unit's transaction with what the unit wrote (see the module docstring)
InUnit = Callable[[Outcome], None]


# ---------------------------------------------------------------- reading


class _Counter:
    """Bytes read so far through the tracked input (for the progress bar)."""

    def __init__(self) -> None:
        self.read = 0


class _CountingRaw:
    """A file-like wrapper that counts the bytes read through it."""

    def __init__(self, fh: IO[bytes], counter: _Counter) -> None:
        self._fh = fh
        self._counter = counter
        counter.read = 0

    def read(self, size: int = -1) -> bytes:
        budget.check()
        data = self._fh.read(size)
        self._counter.read += len(data)
        return data

    def readline(self, size: int = -1) -> bytes:
        budget.check()
        data = self._fh.readline(size)
        self._counter.read += len(data)
        return data

    def __iter__(self) -> Iterator[bytes]:
        while True:
            line = self.readline()
            if not line:
                return
            yield line

    def seek(self, offset: int, whence: int = 0) -> int:
        pos = self._fh.seek(offset, whence)
        self._counter.read = pos
        return pos

    def tell(self) -> int:
        return self._fh.tell()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fh, name)


@dataclass
class _TrackedInput(Input):
    """An Input whose reads are counted, so a progress bar can follow the parser."""

    counter: _Counter = field(default_factory=_Counter, repr=False)

    @contextmanager
    def open(self) -> Iterator[IO[bytes]]:
        with Input.open(self) as fh:
            yield _CountingRaw(fh, self.counter)  # type: ignore[misc]


def _size_of(inp: Input) -> int:
    if inp.member is None and inp.path.is_dir():
        return sum(p.stat().st_size for p in inp.path.rglob("*.jsonl") if p.is_file())
    if inp.member is None:
        return inp.path.stat().st_size
    import zipfile

    with zipfile.ZipFile(inp.path) as zf:
        return min(zf.getinfo(inp.member).file_size, inp.limits.zip_member)


def resolve_format(name: str) -> str:
    """A format name as given on the command line (`openai-jsonl`) -> registry name."""
    fmt = name.strip().lower().replace("-", "_")
    if fmt in ("json", "jsonl", "native"):
        fmt = NATIVE
    if fmt != "auto" and fmt != NATIVE and fmt not in FORMATS:
        names = ", ".join(usage((NATIVE,)).split("|"))
        raise InvalidInput("--format", f"unknown format {name!r}; supported: {names}")
    return fmt


def open_export(
    path: str | os.PathLike[str], format: str = "auto", *,
    files: Path | Beside | None = BESIDE, limits: Limits = DEFAULT,
) -> tuple[str, _TrackedInput]:
    """(format, the document to read) for an export file: native first, then the parsers."""
    fmt = resolve_format(format)
    doc = _document(Path(path), files, limits)
    inp = _TrackedInput(doc.path, doc.member, files, limits)
    if fmt == "auto":
        folder = inp.member is None and inp.path.is_dir()
        fmt = NATIVE if not folder and native.is_native(inp) else detect(inp)
    elif inp.member is None and inp.path.is_dir() and fmt != detect(inp):
        raise InvalidInput(str(path), f"is a directory; --format {format} reads a file")
    return fmt, inp


# ---------------------------------------------------------------- importing


#: an import that wrote this many messages brings the planner's statistics up to date
#: (`Backend.settle`), so the first look at what it brought is planned as well as later ones
SETTLE_AFTER = 1_000


def import_file(
    loom: Loom,
    path: str | os.PathLike[str],
    format: str = "auto",
    *,
    stop_on_error: bool = False,
    progress: Progress | None = None,
    on_spawn: Callable[[dict[str, Any]], None] | None = None,
    complete_only: bool = False,
    files: str | os.PathLike[str] | Beside | None = BESIDE,
    in_unit: InUnit | None = None,
    seconds: float | None = None,
    sees: Callable[[str], bool] | None = None,
) -> ImportReport:
    """Import every conversation of an export file; see the module docstring.

    Problems with the whole file (missing, not JSON, unknown format) raise InvalidInput
    before anything is written. A conversation that cannot be read or written becomes
    an entry in `errors` and the others are imported, unless `stop_on_error`, which
    stops at the first one (conversations imported before it stay: each is its own
    transaction). A file that breaks off half-way keeps the conversations before the
    break and reports the break as the last error.

    `seconds`: a wall-clock budget (an upload's, `limits.import_seconds`). Past it the
    conversation being written rolls back and `budget.OverBudget` is raised carrying
    the report of what had landed (`.report`), so the caller can remove that too.

    `sees(tree id)`: the trees whose nodes a line may name as the node it was exported
    from or copied from (a user's import sees their own; None: every tree)."""
    report = ImportReport()
    started = time.perf_counter()
    try:
        with budget.within(seconds):
            _import(loom, path, format, report, stop_on_error=stop_on_error, progress=progress,
                    on_spawn=on_spawn, complete_only=complete_only, files=files,
                    in_unit=in_unit, started=started, sees=sees)
    except budget.OverBudget as exc:
        exc.report = report
        raise
    finally:
        report.seconds = time.perf_counter() - started
    return report


def _import(
    loom: Loom, path: str | os.PathLike[str], format: str, report: ImportReport, *,
    stop_on_error: bool, progress: Progress | None,
    on_spawn: Callable[[dict[str, Any]], None] | None, complete_only: bool,
    files: str | os.PathLike[str] | Beside | None, in_unit: InUnit | None, started: float,
    sees: Callable[[str], bool] | None = None,
) -> None:
    folder = files if files is None or isinstance(files, Beside) else Path(files)
    fmt, inp = open_export(path, format, files=folder, limits=loom.limits)
    report.format = fmt
    total = _size_of(inp)
    run = links.Run()  # what a native import brought so far (its links may end there)
    seen: dict[str, tuple[str, str]] = {}
    written: Written = {}

    def write_conv(conv: ImportedConversation) -> Outcome:
        if conv.more:  # the first of its parts: the others follow in `units`
            return _write_parts(loom, conv, units, seen, written, sees)
        return write_conversation(loom, conv, seen, written, sees)

    write: Callable[[Any], Outcome]
    if fmt == NATIVE:
        units: Iterator[tuple[str, Any]] = guarded_units(native.read_units(inp), inp.name)
        write = lambda doc: _native_tree(loom, doc, run)  # noqa: E731
    else:
        units = guarded_units(_labelled(_parse(loom, fmt, inp, complete_only), inp.name),
                              inp.name)
        write = write_conv
    abandoned: str | None = None  # a conversation in parts that failed: its later parts
    try:
        for where, item in units:
            budget.check()  # also when a parser made the refusal one conversation's error
            if abandoned is not None and isinstance(item, ImportedConversation) \
                    and item.source_id == abandoned:
                abandoned = abandoned if item.more else None
                continue
            abandoned = None
            if isinstance(item, EmptyConversation):
                report.skip(item.where, item.reason)
            elif isinstance(item, ParseError):
                report.error(item.where, item.reason)
            else:
                try:
                    with storage(loom).transaction():
                        budget.check()
                        outcome = write(item)
                        if outcome.spawned is not None and on_spawn is not None:
                            on_spawn(outcome.spawned)
                        if in_unit is not None:
                            in_unit(outcome)
                        budget.check()  # a unit that ran past the budget rolls back
                except budget.OverBudget:
                    raise
                except _Broken as exc:  # its parts rolled back
                    report.error(exc.where, exc.reason)
                    landed = False
                except Exception as exc:  # noqa: BLE001 - reported, the unit rolled back
                    report.error(where, _reason(exc))
                    landed = False
                    if isinstance(item, ImportedConversation) and item.more:
                        abandoned = item.source_id
                else:
                    report.add(outcome, where)
                    landed = True
                run.settle(landed)
            report.bytes = inp.counter.read
            if progress is not None:
                report.seconds = time.perf_counter() - started
                progress(report, inp.counter.read, total)
            if stop_on_error and report.errors:
                break
    except budget.OverBudget:
        raise
    except InvalidInput as exc:
        if report.conversations == 0:
            raise
        report.error(exc.where, exc.why)
    # (a parser that opens its files itself, a Claude Code session's, read them all)
    report.bytes = inp.counter.read or total
    _late_links(loom, run, report)
    if report.nodes >= SETTLE_AFTER:
        storage(loom).settle()




class _Broken(Exception):
    """A conversation given in parts whose reading broke off: its error, where it broke."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(reason)
        self.where, self.reason = where, reason


def _write_parts(
    loom: Loom, first: ImportedConversation, units: Iterator[tuple[str, Any]],
    seen: dict[str, tuple[str, str]], written: Written, sees: Callable[[str], bool] | None,
) -> Outcome:
    """A conversation given in parts, every part written in the caller's transaction:
    the parts after `first` are taken from `units` as they are read."""
    parts = Parts(loom, first, seen, written, sees)
    outcome = parts.add(first)
    while outcome is None:
        budget.check()
        try:
            where, item = next(units)
        except StopIteration:
            raise _Broken(first.source_id, "the file ended inside this conversation") from None
        if isinstance(item, ParseError):
            raise _Broken(item.where, item.reason)
        if not isinstance(item, ImportedConversation) or item.source_id != first.source_id:
            raise _Broken(where, "a conversation began before the last one ended")
        outcome = parts.add(item)
    return outcome


#: what an agent session may hold of its messages before it is written in parts
#: (characters of text kept): a session longer than this is not held whole
PART_CHARS = 16 * 1024 * 1024


def _parse(
    loom: Loom, fmt: str, inp: Input, complete_only: bool
) -> Iterator[ImportedConversation | ParseError]:
    """The parser of `fmt`; agent session formats also take the store's limits; a
    Codex rollout comes in parts of at most `PART_CHARS`."""
    if fmt == claude_code.FORMAT:
        return claude_code.parse(inp, limits=loom.limits, complete_only=complete_only)
    if fmt == codex.FORMAT:
        return codex.parse(inp, part_chars=PART_CHARS)
    return FORMATS[fmt](inp)


def _native_tree(loom: Loom, doc: Any, run: links.Run) -> Outcome:
    """One tree document of a loomdb export; a tree met again in the same file that adds
    nothing is a copy, said in a warning (one that adds nodes completes the tree)."""
    outcome = native.import_tree(loom, doc, run)
    if outcome.tree in run.trees and not outcome.nodes:
        outcome.warnings.append(f"a copy of tree {outcome.tree} earlier in this file; skipped")
    run.trees.add(outcome.tree)
    return outcome


def _late_links(loom: Loom, run: links.Run, report: ImportReport) -> None:
    """Link edges to trees that came later in the file, written once those landed (in
    one transaction); a link to a node this import did not bring is left out."""
    if not run.late():
        return
    with storage(loom).transaction():
        for where, edge, why in links.late_links(loom, run):
            if why is not None:
                report.warn(where, why)
            elif edge is not None:
                storage(loom).restore_edge(edge)


def guarded_units(units: Iterator[tuple[str, Any]], name: str) -> Iterator[tuple[str, Any]]:
    """The units a reader gives; an exception of the reader itself that is not loomdb's
    (the parsers turn what they can into a per-conversation `ParseError`) ends the file
    as one more refused unit, never a traceback: nothing after it can be read."""
    index = 0
    while True:
        try:
            where, item = next(units)
        except StopIteration:
            return
        except (LoomError, RecursionError, MemoryError):
            raise
        except Exception as exc:  # noqa: BLE001 - a reader broke on what it read
            why = f"cannot be read past here ({type(exc).__name__}); nothing after it imported"
            yield f"{name} conversation {index}", ParseError(f"{name} conversation {index}", why)
            return
        index += 1
        yield where, item


def _labelled(
    items: Iterable[ImportedConversation | ParseError], name: str
) -> Iterator[tuple[str, ImportedConversation | ParseError]]:
    index = 0
    for item in items:
        if isinstance(item, ParseError):
            yield item.where, item
        else:
            yield f"{name}[{index}] (id {item.source_id})", item
            if item.more:
                continue  # its next part is the same conversation
        index += 1


def _reason(exc: Exception) -> str:
    if isinstance(exc, LoomError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
