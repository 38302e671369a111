"""Claude Code sessions (`~/.claude/projects/<project>/`) into the intermediate form.

`parse(path)` takes one session file or a project folder. Each session file is one
conversation (its lines folded into messages by `claude_code_lines`), and each of its
subagent runs is a conversation of its own whose `spawn` names the Task call that
started it and the tool node that carried its result back, so the writer gives it the
lineage `loomdb spawn` writes. Claude Code has kept subagents in three layouts:

* 1.0.x: inline `isSidechain` runs in the session file, each its own root, matched to
  the Task call whose `prompt` is the run's first message;
* 2.0.x: `agent-<id>.jsonl` beside the session file, linked through the Task result's
  `toolUseResult.agentId`;
* 2.1.x: `<session>/subagents/agent-<id>.jsonl`, linked the same way.

`agent-acompact-*` files are the compaction summariser's own runs: each becomes the
child tree of the compaction node it wrote. `summary` lines (with `leafUuid`) title the
tree when they name its active leaf and bookmark the leaf they name; one naming a leaf
this import does not hold is said in a warning.

Only files found by listing the folder the user gave (and the session's own
`subagents/` folder) are read, never a path a line names; symbolic links are skipped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any, TypeVar

from ..errors import InvalidInput
from ..limits import Limits
from .claude_code_lines import (
    FORMAT,
    Folder,
    Line,
    Session,
    Unit,
    check_depth,
    read_lines,
    session_id_of,
    to_messages,
)
from .model import ImportedConversation, ParseError, guarded
from .stream import Input, as_input

__all__ = ["FORMAT", "looks_like", "parse", "parse_entries", "projects", "session_files"]

_AGENT = re.compile(r"^agent-([A-Za-z0-9_-]{1,128})\.jsonl$")
_SESSION = re.compile(r"^[A-Za-z0-9_.-]{1,200}\.jsonl$")
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,199}$")
#: the most session files one folder import reads
MAX_FILES = 100_000
T = TypeVar("T")


def looks_like(record: Any) -> bool:
    """Is this (first) JSONL line a Claude Code session line?"""
    if not isinstance(record, dict):
        return False
    if "parentUuid" in record or "leafUuid" in record:
        return True
    return record.get("type") in ("file-history-snapshot", "permission-mode", "summary") or (
        "sessionId" in record and record.get("type") in ("user", "assistant", "system"))


def session_files(folder: Path) -> list[Path]:
    """The session files of a project folder (not subagent files), sorted by name."""
    return sorted(p for p in _listing(folder) if not _AGENT.match(p.name))


def _listing(folder: Path) -> list[Path]:
    """Regular `.jsonl` files directly in `folder` (symbolic links left out)."""
    if not folder.is_dir() or folder.is_symlink():
        return []
    out: list[Path] = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_file(follow_symlinks=False) and _SESSION.match(entry.name):
                out.append(Path(entry.path))
                if len(out) > MAX_FILES:
                    raise InvalidInput(str(folder), f"holds more than {MAX_FILES} session files")
    return out


# ---------------------------------------------------------------- parsing


@dataclass(frozen=True)
class _Options:
    limits: Limits
    complete_only: bool


@dataclass
class _Read:
    """A session file, folded, with where its subagent files are."""

    path: Path
    session: Session
    folder: Folder
    opts: _Options
    named: bool = False  # the file is named for the session its lines name
    #: agent id -> its file, or its lines already read (a session store's entries)
    agents: dict[str, Path | list[Line]] = field(default_factory=dict)


def parse(
    source: str | os.PathLike[str] | Input, *, limits: Limits | None = None,
    complete_only: bool = False,
) -> Iterator[ImportedConversation | ParseError]:
    """Every conversation of a session file or project folder (see the module
    docstring); `complete_only` leaves out a last line still missing its newline (a
    file being written, as `loomdb watch` reads it)."""
    inp = as_input(source)
    path = inp.path
    opts = _Options(limits or Limits(), complete_only)
    folders = [path] if path.is_dir() and session_files(path) else projects(path)
    files = [f for folder in folders for f in session_files(folder)]
    if not files and path.is_dir():
        return
    files = files or [path]
    reads: list[_Read] = []
    beside: dict[Path, dict[str, dict[str, Path]]] = {}
    for file in files:
        try:
            read = _read(file, opts)
        except InvalidInput as exc:
            yield ParseError(file.name, str(exc))
            continue
        if (folders or read.named) and inp.folder is not None:
            # a file laid out by Claude Code: its subagents beside it (never for an
            # upload, which reads no file of the server: see `loomdb.interop.files`)
            sid = read.session.session_id
            if file.parent not in beside:
                beside[file.parent] = _owned(_agents(file.parent), opts)
            own = _agents(file.parent / sid / "subagents")
            read.agents = {**beside[file.parent].get(sid, {}), **own}
        reads.append(read)
    marks = _summaries(reads, _leaves(reads))
    for read in _forks_last(reads):
        yield from _conversations(read, marks.get(read.session.session_id, {}))


def _forks_last(reads: list[_Read]) -> list[_Read]:
    """The sessions in file order, except that one forked from another of this import
    comes after it (so its copied lines find the nodes the first wrote)."""
    return forks_last(reads, lambda r: r.session.session_id, lambda r: r.session.forked_from)


def forks_last(items: list[T], sid: Callable[[T], str],
               origins: Callable[[T], Sequence[str]]) -> list[T]:
    """`items` (sessions, by `sid`) in their order, except that each comes after the
    ones among them it was forked from (`origins`); a cycle is broken where met."""
    by_id = {sid(item): item for item in items}
    if not any(p in by_id for item in items for p in origins(item)):
        return items
    out: list[T] = []
    placed: set[str] = set()  # sessions placed
    done: set[int] = set()  # items placed (two may name one session)
    for item in items:  # depth first, each session after those it forked from
        stack = [(item, iter(origins(item)))]
        opened = {sid(item)}
        while stack:
            top, parents = stack[-1]
            if id(top) in done:
                stack.pop()
                continue
            above = next((p for p in parents if p in by_id), None)
            if above is None:
                placed.add(sid(top))
                done.add(id(top))
                out.append(top)
                stack.pop()
            elif above not in placed and above not in opened:  # (a cycle is broken here)
                opened.add(above)
                stack.append((by_id[above], iter(origins(by_id[above]))))
    return out


def parse_entries(
    session_id: str, entries: Sequence[Any], agents: Mapping[str, Sequence[Any]] | None = None,
    *, limits: Limits | None = None,
) -> Iterator[ImportedConversation | ParseError]:
    """A session held as its lines already parsed (a session store's entries, in order)
    and its subagents' lines by agent id: the conversations `parse` makes of the same
    lines in files. Each line is checked as a file's line is (an object, nested no
    deeper than `limits.json_depth`)."""
    opts = _Options(limits or Limits(), False)
    name = f"{session_id}.jsonl"
    folder = Folder(session_id, name)
    folder.feed_all(entry_lines(entries, name, opts.limits))
    read = _Read(Path(name), folder.session, folder, opts, named=True)
    read.agents = {agent: entry_lines(lines, f"agent-{agent}.jsonl", opts.limits)
                   for agent, lines in (agents or {}).items()}
    marks = _summaries([read], _leaves([read]))
    yield from _conversations(read, marks.get(session_id, {}))


def entry_lines(entries: Sequence[Any], name: str, limits: Limits) -> list[Line]:
    """Parsed lines as a file's lines read (`read_lines`)."""
    out: list[Line] = []
    for number, value in enumerate(entries, start=1):
        if not isinstance(value, dict):
            raise InvalidInput(f"{name} line {number}", "expected a JSON object")
        check_depth(value, f"{name} line {number}", limits.json_depth)
        uuid, parent = value.get("uuid"), value.get("parentUuid")
        out.append(Line(number, value, uuid if isinstance(uuid, str) and uuid else None,
                        parent if isinstance(parent, str) and parent else None))
    return out


def projects(path: Path) -> list[Path]:
    """The project folders of a projects folder (`~/.claude/projects`), by name."""
    if not path.is_dir() or path.is_symlink():
        return []
    with os.scandir(path) as entries:
        subs = sorted(Path(e.path) for e in entries if e.is_dir(follow_symlinks=False))
    return [sub for sub in subs[:MAX_FILES] if session_files(sub)]


def _agents(folder: Path) -> dict[str, Path]:
    """The subagent files directly in `folder` by agent id (its session files, which
    may be many, are passed over by name)."""
    out: dict[str, Path] = {}
    if not folder.is_dir() or folder.is_symlink():
        return out
    with os.scandir(folder) as entries:
        for entry in entries:
            m = _AGENT.match(entry.name) if entry.name.startswith("agent-") else None
            if m and entry.is_file(follow_symlinks=False):
                out[m.group(1)] = Path(entry.path)
                if len(out) > MAX_FILES:
                    raise InvalidInput(str(folder), f"holds more than {MAX_FILES} session files")
    return out


def _owned(agents: dict[str, Path], opts: _Options) -> dict[str, dict[str, Path]]:
    """The 2.0.x agent files beside the session files, by the session their first line
    names (each read once); a file whose first line names none belongs to no session."""
    import json

    out: dict[str, dict[str, Path]] = {}
    for agent, path in agents.items():
        with open(path, "rb") as fh:
            head = fh.readline(opts.limits.session_line)
        try:
            first = json.loads(head)
        except (ValueError, RecursionError):
            continue
        owner = first.get("sessionId") if isinstance(first, dict) else None
        if isinstance(owner, str):
            out.setdefault(owner, {})[agent] = path
    return out


def _read(path: Path, opts: _Options, session_id: str | None = None) -> _Read:
    """A session file, folded as it is read. Its id: `session_id` (a subagent's), else
    the file's name when its lines name that session (as Claude Code lays files out),
    else the session its lines name (an uploaded copy under another name), else the
    file name. Only the lines up to the first that names a session are held before
    folding starts."""
    stem = session_id_of(path)
    agent = _AGENT.match(path.name)
    with open(path, "rb") as fh:
        lines = read_lines(fh, path.name, limits=opts.limits, complete_only=opts.complete_only)
        ahead: list[Line] = []
        declared = None
        for line in lines:
            ahead.append(line)
            named = line.raw.get("sessionId")
            if isinstance(named, str) and _SAFE_NAME.match(named):
                declared = named
                break
        if session_id is None and agent and declared:  # a subagent's file, given alone
            session_id = f"{declared}/agent-{agent.group(1)}"
        sid = session_id or (stem if declared in (None, stem) else declared)
        folder = Folder(sid, path.name)
        folder.feed_all(chain(ahead, lines))
    return _Read(path, folder.session, folder, opts, named=declared == stem)


def _leaves(reads: list[_Read]) -> dict[str, tuple[str, str]]:
    """line uuid -> (session id, unit) for every line of this import (summaries' leaves)."""
    out: dict[str, tuple[str, str]] = {}
    for read in reads:
        for uuid, unit in read.folder.line_unit.items():
            if unit is not None:
                out.setdefault(uuid, (read.session.session_id, unit))
    return out


def _conversations(
    read: _Read, marks: dict[str, str]
) -> Iterator[ImportedConversation | ParseError]:
    session = read.session
    sid = session.session_id
    groups = _groups(session.units)
    main_root = next((r for r, us in groups.items() if not us[0].metadata.get("sidechain")),
                     next(iter(groups), None))
    for root, units in groups.items():
        if root != main_root:
            continue
        item = guarded(read.path.name, _conversation, read, sid, units, None, marks)
        if isinstance(item, ImportedConversation):
            item.warnings.extend(_missing_agents(read))
        yield item
    tasks = {prompt.strip(): call for call, (_, prompt) in session.task_calls.items() if prompt}
    for root, units in groups.items():
        if root == main_root:
            continue
        if not units[0].metadata.get("sidechain"):
            yield _part(read, root, units, marks)
            continue
        first = "\n".join(b.get("text", "") for b in units[0].blocks).strip()
        call = tasks.pop(first, None)
        spawn = _spawn(session, call, first) if call else None
        yield guarded(f"{read.path.name} sidechain {root}", _conversation, read,
                      f"{sid}/sidechain-{root}", units, spawn, marks)
    yield from _agent_files(read)


def _missing_agents(read: _Read) -> list[str]:
    """A warning naming the subagent runs the session's Task results name whose files
    this import did not have (not beside the session file, or an upload of it alone)."""
    missing = sorted(set(read.session.agent_results) - set(read.agents))
    if not missing:
        return []
    shown = ", ".join(f"agent-{a}.jsonl" for a in missing[:3])
    more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
    where = f"{read.session.session_id}/subagents/"
    return [f"the session names {len(missing)} subagent run(s) whose file is missing "
            f"({shown}{more}, looked for in {where}); their Task calls keep only their "
            f"results"]


def _part(
    read: _Read, root: str, units: list[Unit], marks: dict[str, str]
) -> ImportedConversation | ParseError:
    """Messages of the session that hang from a line this file does not hold (a session
    continued from another file): a tree of their own, said in a warning."""
    sid = read.session.session_id
    item = guarded(f"{read.path.name} part {root}", _conversation, read,
                   f"{sid}/part-{root}", units, None, marks)
    if isinstance(item, ImportedConversation):
        elsewhere = units[0].metadata.get("parent_elsewhere")
        item.warnings = [f"messages that hang from line {elsewhere!s}, which this file does not "
                         f"hold (a session continued from another); imported as a tree of "
                         f"their own"]
    return item


def _agent_files(read: _Read) -> Iterator[ImportedConversation | ParseError]:
    session = read.session
    compactions = [u for u in session.units if u.kind == "compaction"]
    linked = set(session.agent_results.values())
    by_prompt = {prompt.strip(): call for call, (_, prompt) in session.task_calls.items()
                 if prompt and call not in linked}
    for agent, path in sorted(read.agents.items()):
        call = session.agent_results.get(agent)
        label = path.name if isinstance(path, Path) else f"agent-{agent}.jsonl"
        try:
            if isinstance(path, Path):
                sub = _read(path, read.opts, f"{session.session_id}/agent-{agent}")
            else:
                sub = _folded(path, label, session.session_id, agent, read.opts)
        except InvalidInput as exc:
            yield ParseError(label, str(exc))
            continue
        if call is None and sub.session.first_prompt:
            # still running: its Task call has no result (and so no agentId) yet
            call = by_prompt.pop(sub.session.first_prompt.strip(), None)
        if call is not None:
            spawn = _spawn(session, call, sub.session.first_prompt or "")
        elif compactions and agent.startswith("acompact"):
            target = _compaction_for(sub.session, compactions)
            spawn = {"conversation": session.session_id, "message": target.sid,
                     "task": "compaction", "summary": target.sid}
        else:
            spawn = None  # a tree of its own, with a warning
        groups = _groups(sub.session.units)
        units = [u for us in groups.values() for u in us]
        item = guarded(label, _conversation, sub, sub.session.session_id, units, spawn, {})
        if spawn is None and isinstance(item, ImportedConversation):
            item.warnings.append("a subagent run no Task call of its session names; imported "
                                 "as a tree of its own")
        yield item


def _folded(lines: list[Line], label: str, session_id: str, agent: str, opts: _Options) -> _Read:
    """A subagent's lines already read, folded as `_read` folds its file."""
    folder = Folder(f"{session_id}/agent-{agent}", label)
    folder.feed_all(lines)
    return _Read(Path(label), folder.session, folder, opts)


def _compaction_for(sub: Session, compactions: list[Unit]) -> Unit:
    """The compaction an `agent-acompact-*` run wrote: the first one at or after it."""
    start = sub.units[0].created_at if sub.units else None
    for unit in compactions:
        if start is None or unit.created_at is None or unit.created_at >= start:
            return unit
    return compactions[-1]


def _spawn(session: Session, call: str, task: str) -> dict[str, Any] | None:
    """The `spawn` of a subagent run started by the Task call `call`."""
    holder = session.task_calls.get(call)
    if holder is None:
        return None
    return {"conversation": session.session_id, "message": holder[0], "call": call,
            "task": (task or holder[1])[:2000], "summary": session.results.get(call)}


def _groups(units: list[Unit]) -> dict[str, list[Unit]]:
    """Units by the root they hang from (a sidechain run is its own root), in order (a
    unit's parent is always an earlier unit)."""
    root_of: dict[str, str] = {}
    groups: dict[str, list[Unit]] = {}
    for unit in units:
        root = root_of[unit.parent] if unit.parent is not None else unit.sid
        root_of[unit.sid] = root
        groups.setdefault(root, []).append(unit)
    return groups


def _summaries(
    reads: list[_Read], leaves: dict[str, tuple[str, str]]
) -> dict[str, dict[str, str]]:
    """session -> unit -> summary text, for every summary line of the import whose leaf
    one of its sessions holds (often another session than the line's: Claude Code writes
    the summaries of earlier sessions at the top of a new one). The others are kept in
    their session's metadata and said in one warning there."""
    marks: dict[str, dict[str, str]] = {}
    for read in reads:
        missing: list[str] = []
        for leaf, text in read.session.summaries:
            found = leaves.get(leaf)
            if found is None:
                missing.append(leaf)
                continue
            marks.setdefault(found[0], {})[found[1]] = text
        if not missing:
            continue
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        read.session.metadata["summary_warning"] = (
            f"{len(missing)} summary line(s) name a leaf this import does not hold ({shown}); "
            f"kept in the tree's metadata")
        gone = set(missing)
        read.session.metadata["summaries"] = [
            {"leaf": leaf, "summary": text} for leaf, text in read.session.summaries
            if leaf in gone][:1000]
    return marks


def _conversation(
    read: _Read, conv_id: str, units: list[Unit], spawn: dict[str, Any] | None,
    marks: dict[str, str],
) -> ImportedConversation:
    session = read.session
    where = read.path.name
    sub = Session(session.session_id, units, [], {}, {}, {}, {}, session.attachments)
    messages = to_messages(sub, where)
    current = max(units, key=lambda u: u.last_line).sid if units else None
    title = marks.get(current) if current else None
    for m in messages:
        if m.source_id in marks:
            m.bookmark = marks[m.source_id]
    metadata: dict[str, Any] = {"session": session.session_id}
    if session.skipped:
        metadata["lines_not_messages"] = dict(session.skipped)
    warnings: list[str] = []
    if spawn is None and conv_id == session.session_id:
        if "summaries" in session.metadata:
            metadata["summaries"] = session.metadata["summaries"]
            warnings.append(session.metadata["summary_warning"])
    if spawn is None and conv_id != session.session_id:
        warnings.append("a subagent run whose Task call this session does not hold; "
                        "imported as a tree of its own")
    return ImportedConversation(
        source_format=FORMAT, source_id=conv_id, title=title,
        created_at=units[0].created_at if units else None, mode="dialogue",
        messages=messages, current_source_id=current,
        attachments=session.attachments.to_list(), metadata=metadata, spawn=spawn,
        warnings=warnings, forked_from=list(session.forked_from) if conv_id == session.session_id else [],
    )
