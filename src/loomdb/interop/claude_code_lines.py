"""One Claude Code session file (JSONL) into one conversation: lines folded into messages.

Claude Code writes a session as lines linked by `uuid` / `parentUuid`, but a line is
not a message:

* one API reply is written as several `assistant` lines, one per content block, all
  sharing `message.id`; they are one node (tool calls stay in it, thinking is kept);
* `user` lines holding only `tool_result` blocks answer the reply whose calls they
  carry; every result of one reply is one `tool` node under it, however the lines hang
  (parallel calls hang each result off the line with its own call, and a reply that
  streamed its calls one by one interleaves calls and results): so neither makes a
  branch;
* lines that are no message (`attachment`, `progress`, `system` notes, hook output)
  are transparent: a line hanging off one hangs off the message before it; lines
  without a `uuid` (`summary`, `file-history-snapshot`, `permission-mode`, ...) are
  not in the chain at all;
* a `system` line of subtype `compact_boundary` (`parentUuid: null`,
  `logicalParentUuid` naming the last message before it) is a compaction node on the
  same path, holding the summary of the `isCompactSummary` user line that follows it.

What is left is a tree whose branches are the real ones: a user re-asking from an
earlier point, a rewind. Every field is untrusted: a line over the length limit or
nested too deep is refused with its line number, and nothing a line names (a path, a
file) is ever opened.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..errors import InvalidInput
from ..limits import Limits
from . import budget
from .model import (
    AttachmentSet,
    ImportedMessage,
    as_dict,
    as_str,
    check_blocks,
    parse_data_url,
    text_block,
    to_datetime,
)
from .roundtrip import node_of_uuid

FORMAT = "claude_code"
_DEFAULTS = Limits()
_SAFE_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
#: the most sessions one session file is taken to be forked from (a fork of a fork...)
MAX_FORKED = 8
#: line fields kept as inert metadata on the node a line belongs to
_KEPT = {"cwd": "cwd", "gitBranch": "git_branch", "version": "version",
         "sessionId": "session", "userType": "user_type", "requestId": "request_id"}


@dataclass
class Line:
    """One parsed line of a session file (only the fields the folding needs)."""

    number: int
    raw: dict[str, Any]
    uuid: str | None
    parent: str | None


@dataclass
class Unit:
    """A message being built from one or more lines."""

    sid: str  # the uuid of its first line
    parent: str | None
    role: str
    kind: str = "message"
    blocks: list[dict[str, Any]] = field(default_factory=list)
    created_at: Any = None
    model: str | None = None
    hidden: bool = False
    message_id: str | None = None
    uuids: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    tool_unit: str | None = None  # for an assistant unit: the tool node of its results
    calls: dict[str, str] = field(default_factory=dict)  # tool_use id -> tool name
    last_line: int = 0  # the newest line joined (the active leaf is the newest unit)


@dataclass
class Session:
    """What one session file holds, folded: messages in order, and what else it said."""

    session_id: str
    units: list[Unit]
    summaries: list[tuple[str, str]]  # (leafUuid, summary text)
    skipped: dict[str, int]  # lines that are no message, by type
    agent_results: dict[str, str]  # agentId (toolUseResult) -> tool_use id it answered
    task_calls: dict[str, tuple[str, str]]  # Task tool_use id -> (unit sid, prompt)
    results: dict[str, str]  # tool_use id -> unit sid of the tool node holding its result
    attachments: AttachmentSet
    first_prompt: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    #: the other sessions its replies were asked in (`requestSessionId`), in file order:
    #: the lines `--fork-session` copied from the session it forked
    forked_from: list[str] = field(default_factory=list)


def read_lines(
    fh: IO[bytes], name: str, *, limits: Limits = _DEFAULTS, complete_only: bool = False
) -> Iterator[Line]:
    """The JSON lines of a session file. A line longer than `limits.session_line` or
    nested deeper than `limits.json_depth` is refused naming its number; a last line
    without its newline that does not parse is still being written and is left for
    later (with `complete_only`, any last line without its newline is)."""
    for number, raw in enumerate(_raw_lines(fh, name, limits.session_line), start=1):
        if not raw.endswith(b"\n") and complete_only:
            return
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            if not raw.endswith(b"\n"):
                return  # a half-written last line: the rest comes later
            raise InvalidInput(f"{name} line {number}", "not a JSON value") from None
        if not isinstance(value, dict):
            raise InvalidInput(f"{name} line {number}", "expected a JSON object")
        check_depth(value, f"{name} line {number}", limits.json_depth)
        uuid = value.get("uuid")
        parent = value.get("parentUuid")
        yield Line(number, value, uuid if isinstance(uuid, str) and uuid else None,
                   parent if isinstance(parent, str) and parent else None)


def _raw_lines(fh: IO[bytes], name: str, longest: int) -> Iterator[bytes]:
    number = 0
    while True:
        budget.check()
        raw = fh.readline(longest + 1)
        if not raw:
            return
        number += 1
        if len(raw) > longest:
            raise InvalidInput(f"{name} line {number}", f"longer than {longest} bytes "
                               f"(LOOMDB_LIMIT_SESSION_LINE)")
        yield raw


def check_depth(value: Any, where: str, limit: int = _DEFAULTS.json_depth) -> None:
    """Refuse a value nested deeper than `limit` (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            raise InvalidInput(where, f"nested deeper than {limit} levels")
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item if isinstance(v, (dict, list)))


# ---------------------------------------------------------------- folding


class Folder:
    """Folds the lines of one session file into units (see the module docstring)."""

    def __init__(self, session_id: str, name: str) -> None:
        self.name = name
        self.session = Session(session_id, [], [], {}, {}, {}, {}, AttachmentSet())
        self.line_unit: dict[str, str | None] = {}  # line uuid -> unit sid (None: above root)
        self.units: dict[str, Unit] = {}
        self.by_message: dict[str, str] = {}  # message.id -> assistant unit sid
        self.boundaries: dict[str, str] = {}  # compact_boundary line uuid -> unit sid
        self.last: str | None = None  # the newest unit (a boundary's fallback parent)
        self.above: dict[str, str] = {}  # a non-message line above every message -> its parent

    def feed_all(self, lines: Iterable[Line]) -> None:
        """Every line as it is read (folded, then dropped: memory follows the messages,
        not the file), each after the line it hangs from: a line whose parent has not
        been fed waits for it (a file may write a line before its parent). Lines whose
        parent never comes are fed at the end, in file order, as hanging from outside
        the file; lines waiting on each other (a cycle) are broken at the first."""
        seen: set[str] = set()
        waiting: dict[str, list[Line]] = {}
        for line in lines:
            if line.uuid is not None:
                seen.add(line.uuid)
            if line.parent is not None and line.parent not in self.line_unit:
                waiting.setdefault(line.parent, []).append(line)
                continue
            self._feed_with_waiting(line, waiting)
        absent = sorted((p for p in waiting if p not in seen), key=lambda p: waiting[p][0].number)
        for parent in absent:
            for line in waiting.pop(parent, []):
                self._feed_with_waiting(line, waiting)
        for stuck in list(waiting.values()):  # a cycle: broken at the first line
            for line in stuck:
                line.parent = None
                self._feed_with_waiting(line, waiting)

    def _feed_with_waiting(self, line: Line, waiting: dict[str, list[Line]]) -> None:
        stack = [line]
        while stack:
            item = stack.pop()
            self.feed(item)
            if item.uuid is not None:
                stack.extend(reversed(waiting.pop(item.uuid, [])))

    def feed(self, line: Line) -> None:
        raw = line.raw
        kind = raw.get("type")
        if line.uuid is None:
            if kind == "summary":
                leaf, text = raw.get("leafUuid"), as_str(raw.get("summary"))
                if isinstance(leaf, str) and text:
                    self.session.summaries.append((leaf, text))
            self._skip(kind)
            return
        if line.uuid in self.line_unit:
            return  # the same line copied again (a resumed session): once is enough
        where = f"{self.name} line {line.number}"
        message = raw.get("message")
        if kind == "system" and raw.get("subtype") == "compact_boundary":
            self._boundary(line, where)
        elif kind in ("user", "assistant") and isinstance(message, dict):
            if kind == "assistant":
                self._assistant(line, message, where)
            else:
                self._user(line, message, where)
        else:
            self._skip(kind)
            self.line_unit[line.uuid] = self._unit_of(line.parent)
            if line.parent is not None and self.line_unit[line.uuid] is None:
                self.above[line.uuid] = line.parent

    def _skip(self, kind: Any) -> None:
        key = kind if isinstance(kind, str) and _SAFE_ID.match(kind) else "other"
        self.session.skipped[key] = self.session.skipped.get(key, 0) + 1

    def _elsewhere(self, uuid: str) -> str:
        """The uuid outside this file that a line hangs from, through non-message lines."""
        seen = 0
        while uuid in self.above and seen < len(self.above):
            uuid, seen = self.above[uuid], seen + 1
        return uuid

    def _unit_of(self, uuid: str | None) -> str | None:
        return self.line_unit.get(uuid) if uuid is not None else None

    def _new(self, line: Line, parent: str | None, role: str, **kw: Any) -> Unit:
        assert line.uuid is not None
        unit = Unit(line.uuid, parent, role, created_at=self._time(line), **kw)
        if parent is None and line.parent is not None:  # hangs from a line not in this file
            unit.metadata["parent_elsewhere"] = self._elsewhere(line.parent)
        self.units[unit.sid] = unit
        self.session.units.append(unit)
        self.last = unit.sid
        _keep_metadata(unit, line.raw, self.session.session_id)
        return unit

    def _time(self, line: Line) -> Any:
        return to_datetime(line.raw.get("timestamp"), f"{self.name} line {line.number}.timestamp")

    def _join(self, unit: Unit, line: Line) -> None:
        assert line.uuid is not None
        self.line_unit[line.uuid] = unit.sid
        unit.uuids.append(line.uuid)
        unit.last_line = line.number

    # -- the three kinds of message lines ---------------------------------------------
    def _assistant(self, line: Line, message: dict[str, Any], where: str) -> None:
        asked = line.raw.get("requestSessionId")  # a line copied by `--fork-session`
        forked = self.session.forked_from
        if (isinstance(asked, str) and asked != self.session.session_id and _SAFE_ID.match(asked)
                and asked not in forked and len(forked) < MAX_FORKED):
            forked.append(asked)
        parent = self._unit_of(line.parent)
        mid = as_str(message.get("id"))
        known = self.units.get(self.by_message.get(mid, "")) if mid else None
        if known is not None and parent in (known.sid, known.tool_unit):
            unit = known  # another content block of the same API reply
        else:
            unit = self._new(line, parent, "assistant", message_id=mid,
                             model=as_str(message.get("model")))
            if mid:
                self.by_message[mid] = unit.sid
        self._join(unit, line)
        for i, block in enumerate(_content(message.get("content"))):
            out = assistant_block(block, f"{where}.message.content[{i}]")
            if out is None:
                continue
            unit.blocks.append(out)
            if out["type"] == "tool_use":
                unit.calls[out["id"]] = out["name"]
                if out["name"] in ("Task", "Agent"):
                    prompt = as_str(as_dict(out["input"]).get("prompt")) or ""
                    self.session.task_calls[out["id"]] = (unit.sid, prompt)
        if isinstance(message.get("stop_reason"), str):
            unit.metadata["stop_reason"] = message["stop_reason"]
        if isinstance(message.get("usage"), dict):
            unit.metadata["usage"] = message["usage"]

    def _user(self, line: Line, message: dict[str, Any], where: str) -> None:
        raw = line.raw
        parent = self._unit_of(line.parent)
        blocks = [user_block(b, f"{where}.message.content[{i}]", self.session.attachments)
                  for i, b in enumerate(_content(message.get("content")))]
        if line.parent in self.boundaries and raw.get("isCompactSummary"):
            unit = self.units[self.boundaries[line.parent]]
            unit.blocks = [b for b in blocks if b["type"] != "tool_result"] or unit.blocks
            self._join(unit, line)
            return
        if blocks and all(b["type"] == "tool_result" for b in blocks):
            unit = self._tool_unit(line, parent)
            self._join(unit, line)
            unit.blocks.extend(blocks)
            self._results(unit, blocks, raw)
            return
        if self.session.first_prompt is None and raw.get("isSidechain"):
            self.session.first_prompt = _plain(blocks)
        unit = self._new(line, parent, "user", hidden=bool(raw.get("isMeta")))
        self._join(unit, line)
        unit.blocks.extend(blocks)
        self._results(unit, [b for b in blocks if b["type"] == "tool_result"], raw)

    def _tool_unit(self, line: Line, parent: str | None) -> Unit:
        """The tool node a result line belongs to: the one of the reply it answers."""
        above = self.units.get(parent) if parent is not None else None
        if above is not None and above.role == "tool":
            return above
        if above is not None and above.role == "assistant":
            if above.tool_unit is not None:
                return self.units[above.tool_unit]
            unit = self._new(line, parent, "tool")
            above.tool_unit = unit.sid
            return unit
        return self._new(line, parent, "tool")

    def _results(self, unit: Unit, blocks: list[dict[str, Any]], raw: dict[str, Any]) -> None:
        for b in blocks:
            call = b.get("tool_use_id")
            if isinstance(call, str):
                self.session.results[call] = unit.sid
        agent = as_dict(raw.get("toolUseResult")).get("agentId")
        if isinstance(agent, str) and _SAFE_ID.match(agent) and blocks:
            call = blocks[0].get("tool_use_id")
            if isinstance(call, str):
                self.session.agent_results[agent] = call

    def _boundary(self, line: Line, where: str) -> None:
        raw = line.raw
        logical = raw.get("logicalParentUuid")
        parent = self._unit_of(logical if isinstance(logical, str) else None)
        if parent is None:
            parent = self._unit_of(line.parent) or self.last
        text = as_str(raw.get("content")) or "Conversation compacted"
        unit = self._new(line, parent, "user", kind="compaction", blocks=[text_block(text)])
        meta = as_dict(raw.get("compactMetadata"))
        if meta:
            unit.metadata["compact"] = meta
        self._join(unit, line)
        assert line.uuid is not None
        self.boundaries[line.uuid] = unit.sid


def _content(value: Any) -> list[Any]:
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    return value if isinstance(value, list) else []


def _plain(blocks: list[dict[str, Any]]) -> str:
    return "\n".join(b["text"] for b in blocks if b.get("type") == "text")


def _keep_metadata(unit: Unit, raw: dict[str, Any], session_id: str) -> None:
    for key, name in _KEPT.items():
        value = raw.get(key)
        if isinstance(value, str) and value and not (key == "sessionId" and value == session_id):
            unit.metadata[name] = value[:4096]
    if raw.get("isSidechain"):
        unit.metadata["sidechain"] = True
    for key in ("isMeta", "isCompactSummary"):
        if raw.get(key) is True:
            unit.metadata[key] = True


# ---------------------------------------------------------------- content blocks


def assistant_block(block: Any, where: str) -> dict[str, Any] | None:
    """A reply's content block as a loomdb block (None for a block type not kept)."""
    if not isinstance(block, dict):
        raise InvalidInput(where, "expected a content block object")
    kind = block.get("type")
    if kind == "text":
        return text_block(_text(block.get("text"), where))
    if kind == "thinking":
        out: dict[str, Any] = {"type": "thinking", "thinking": _text(block.get("thinking"), where)}
        if isinstance(block.get("signature"), str) and block["signature"]:
            out["signature"] = block["signature"]
        return out
    if kind == "redacted_thinking":
        return {"type": "thinking", "thinking": "[redacted thinking]"}
    if kind in ("tool_use", "server_tool_use"):
        name = as_str(block.get("name")) or "tool"
        tool_id = as_str(block.get("id")) or f"call-{name}"
        args = block.get("input")
        return {"type": "tool_use", "id": tool_id, "name": name,
                "input": args if isinstance(args, dict) else {"value": args}}
    return text_block(f"[{kind if isinstance(kind, str) else 'block'} not imported]")


def user_block(block: Any, where: str, attachments: AttachmentSet) -> dict[str, Any]:
    """A user line's content block: text, an image (bytes kept), or a tool result."""
    if not isinstance(block, dict):
        raise InvalidInput(where, "expected a content block object")
    kind = block.get("type")
    if kind == "text":
        return text_block(_text(block.get("text"), where))
    if kind in ("image", "document"):
        return _media(block, attachments)
    if kind == "tool_result":
        parts: list[dict[str, Any]] = []
        for part in _content(block.get("content")):
            if isinstance(part, dict) and part.get("type") in ("image", "document"):
                parts.append(_media(part, attachments))
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(text_block(part["text"]))
        out: dict[str, Any] = {"type": "tool_result", "content": parts,
                               "tool_use_id": as_str(block.get("tool_use_id")) or "unknown"}
        if block.get("is_error") is True:
            out["is_error"] = True
        return out
    return text_block(f"[{kind if isinstance(kind, str) else 'block'} not imported]")


def _media(block: dict[str, Any], attachments: AttachmentSet) -> dict[str, Any]:
    """An image or document whose bytes the line holds (base64): kept as a blob."""
    kind = "image" if block.get("type") == "image" else "document"
    source = as_dict(block.get("source"))
    data = source.get("data")
    mime = as_str(source.get("media_type")) or ("image/png" if kind == "image" else
                                                 "application/octet-stream")
    if source.get("type") == "base64" and isinstance(data, str):
        decoded = parse_data_url(f"data:{mime};base64,{data}")
        if decoded is not None:
            from .. import content as C

            key = attachments.add(f"{kind}-" + C.digest(decoded[1])[7:23], decoded[1], mime)
            return {"type": kind, "ref": key, "mime_type": mime}
    if kind == "document" and source.get("type") == "text" and isinstance(data, str):
        return text_block(data)
    return text_block(f"[{kind} not in the session file ({mime})]")


def _text(value: Any, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidInput(where, f"expected a string, got {type(value).__name__}")
    return value


def to_messages(session: Session, where: str) -> list[ImportedMessage]:
    """The folded units as messages, parents first (a unit's parent precedes it)."""
    out: list[ImportedMessage] = []
    for unit in session.units:
        meta = dict(unit.metadata)
        meta["uuids"] = unit.uuids
        if unit.message_id:
            meta["message_id"] = unit.message_id
        out.append(ImportedMessage(
            source_id=unit.sid, parent_source_id=unit.parent, role=unit.role,
            content=check_blocks(unit.blocks, f"{where} message {unit.sid}"),
            created_at=unit.created_at, model=unit.model, hidden=unit.hidden, metadata=meta,
            kind=unit.kind, same_as=node_of_uuid(unit.sid),
        ))
    return out


def session_id_of(path: Path) -> str:
    """A session's id: its file name without `.jsonl` (Claude Code names files so)."""
    return path.name[: -len(".jsonl")] if path.name.endswith(".jsonl") else path.name
