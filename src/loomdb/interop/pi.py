"""pi coding-agent sessions (`~/.pi/agent/sessions/--<cwd>--/*.jsonl`) into the intermediate form.

A session file starts with a header `{"type": "session", "id", "timestamp", "cwd", ...}`
and holds one entry per value. Two layouts:

  * **v1** (no `version`, or 1): entries have no ids; file order is the order, so an
    entry's source id is `#<index of the value in the file>`; a `compaction` names the
    first entry it kept by that index (`firstKeptEntryIndex`, the header counting as
    0); the header may name the session it was branched from (`branchedFrom`); two
    values may share one line (values are read, not lines);
  * **tree** (v2, v3): entries carry `id` / `parentId`: real branches, kept as
    branches; `compaction` names `firstKeptEntryId`; `branch_summary` summarises the
    branch left behind; `label` bookmarks an entry; `session_info` names the session;
    the header's `parentSession` names the session it was forked from.

What becomes a node: `message` entries (user, assistant with text, thinking and
`toolCall` blocks as tool_use, `toolResult` as a tool node of one tool_result,
`bashExecution` and `custom` messages as user nodes saying what they were),
`custom_message` (extension text that entered the context) and `branch_summary` as
user nodes, `compaction` as a compaction node whose hyperedge sources are the turns
it kept. Not nodes: `model_change` and `thinking_level_change` become the options
(`{"pi": {...}}`) of the next node on their branch; `label` a bookmark; `session_info`
the title; `custom` (extension state, never in the context) is left out and counted
in the conversation's metadata. Entries that are not nodes still carry the tree:
a node under one hangs on its nearest node ancestor. The active branch is the last
entry of the file (where pi reopens the session). A `custom_message` of type `system`
(as `export --format pi` writes a system node) is a system node. An entry whose id names
a node of the store (written by that export), or a tree-layout entry in the unbroken
file-order chain pi's upgrade of a v1 file makes (which also carries its v1 name
`#<index>`), is matched to the stored node on import (see `roundtrip`). Paths the header names (a parent
session) are kept as text, never opened.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import Any

from ..errors import InvalidInput
from . import tree
from .codex import session_files
from .model import (
    AttachmentSet,
    ImportedConversation,
    ImportedMessage,
    ParseError,
    as_dict,
    as_str,
    check_blocks,
    content_hash,
    guarded,
    text_block,
    to_datetime,
    tool_result_block,
    tool_use_block,
)
from .roundtrip import node_id
from .stream import Input, as_input
from .values import read_values

FORMAT = "pi"
_NOT_NODES = ("model_change", "thinking_level_change", "label", "session_info", "custom")

Blocks = list[dict[str, Any]]


def parse(source: str | os.PathLike[str] | Input) -> Iterator[ImportedConversation | ParseError]:
    inp = as_input(source)
    for path in session_files(inp.path, "*.jsonl"):
        label = str(path.relative_to(inp.path)) if inp.path.is_dir() else inp.name
        one = inp if path == inp.path else Input(path, limits=inp.limits)  # (its reads counted)
        values = read_values(one)  # folded as they are read
        try:
            first = next(values, None)
        except InvalidInput as exc:
            yield ParseError(label, exc.why)
            continue
        if first is None or not looks_like(first[1]):
            yield ParseError(label, "not a pi session (no session header first)")
            continue
        yield guarded(label, convert, chain([first], values), label)


def looks_like(value: Any) -> bool:
    """Is this the first value of a pi session (its header)?"""
    return (isinstance(value, dict) and value.get("type") == "session"
            and isinstance(value.get("id"), str) and "timestamp" in value
            and "payload" not in value)


def convert(values: Iterable[tuple[int, Any]], label: str) -> ImportedConversation:
    return _Session(label).run(values)


class _Session:
    def __init__(self, label: str) -> None:
        self.label = label
        self.attachments = AttachmentSet()
        self.messages: list[ImportedMessage] = []
        #: entry id -> (nearest node at or above it, options pending below it)
        self.anchor: dict[str, tuple[str | None, dict[str, Any]]] = {}
        self.parents: dict[str, str | None] = {}
        self.labels: list[tuple[str, str]] = []
        self.title: str | None = None
        self.left_out: dict[str, int] = {}

    def run(self, values: Iterable[tuple[int, Any]]) -> ImportedConversation:
        """The session's values, each folded as it is read and then dropped."""
        values = iter(values)
        header = next(values)[1]
        version = header.get("version")
        linear = not isinstance(version, int) or isinstance(version, bool) or version < 2
        ids: list[str] = ["#0"]
        last: str | None = None
        upgraded = not linear  # entries in file order, each under the one before it
        for index, (line, entry) in enumerate(values, start=1):
            where = f"{self.label} line {line}"
            if isinstance(entry, InvalidInput):
                raise InvalidInput(where, entry.why)
            if not isinstance(entry, dict):
                raise InvalidInput(where, "expected a JSON object")
            if linear:
                eid, parent = f"#{index}", last
            else:
                eid = _id(entry.get("id"), f"{where}.id")
                raw_parent = entry.get("parentId")
                parent = None if raw_parent is None else _id(raw_parent, f"{where}.parentId")
            if eid in self.parents:
                raise InvalidInput(f"{where}.id", f"duplicate entry id {eid!r}")
            if parent is not None and parent not in self.parents:
                raise InvalidInput(f"{where}.parentId", f"no entry {parent!r} before it")
            self.parents[eid] = parent
            ids.append(eid)
            count = len(self.messages)
            self._entry(eid, parent, entry, where, ids, linear)
            upgraded = upgraded and parent == last
            if len(self.messages) > count:
                message = self.messages[-1]
                message.same_as = node_id(eid.split(":")[0])
                # pi gives an old session's entries ids when it upgrades the file in
                # place: the name each had before (`#<index>`) finds the nodes made then
                message.earlier_source_id = f"#{index}" if upgraded else None
            last = eid
        messages = tree.order(self.messages, self.label)
        current = self.anchor[last][0] if last is not None else None
        bookmarks = {m.source_id: m for m in messages}
        for target, name in self.labels:
            node = self.anchor.get(target, (None, {}))[0]
            if node is not None:
                bookmarks[node].bookmark = name
        meta = {k: header[k] for k in ("cwd", "version", "provider", "modelId", "thinkingLevel",
                                       "branchedFrom", "parentSession") if k in header}
        if self.left_out:
            meta["left_out"] = dict(self.left_out)
        return ImportedConversation(
            source_format=FORMAT, source_id=as_str(header.get("id")) or content_hash(header),
            title=self.title, created_at=to_datetime(header.get("timestamp"), "header.timestamp"),
            mode="dialogue", messages=messages, current_source_id=current,
            attachments=self.attachments.to_list(), metadata=meta,
        )

    def _entry(self, eid: str, parent: str | None, entry: dict[str, Any], where: str,
               ids: list[str], linear: bool) -> None:
        above, options = self.anchor.get(parent, (None, {})) if parent else (None, {})
        kind = entry.get("type")
        if kind in _NOT_NODES:
            options = dict(options)
            if kind == "model_change":
                options.update({k: entry[k] for k in ("provider", "modelId") if k in entry})
            elif kind == "thinking_level_change":
                options["thinkingLevel"] = entry.get("thinkingLevel")
            elif kind == "label":
                target, name = entry.get("targetId"), as_str(entry.get("label"))
                if isinstance(target, str) and name:
                    self.labels.append((target, name[:60]))
            elif kind == "session_info":
                self.title = as_str(entry.get("name")) or self.title
            else:
                self.left_out[kind] = self.left_out.get(kind, 0) + 1
            self.anchor[eid] = (above, options)
            return
        message = self._message(eid, above, entry, where, ids, linear)
        if options:
            message.options = {"pi": options}
        self.messages.append(message)
        self.anchor[eid] = (eid, {})

    def _message(self, eid: str, above: str | None, entry: dict[str, Any], where: str,
                 ids: list[str], linear: bool) -> ImportedMessage:
        kind = entry.get("type")
        when = to_datetime(entry.get("timestamp"), f"{where}.timestamp")
        out = ImportedMessage(source_id=eid, parent_source_id=above, role="user", content=[],
                              created_at=when)
        if kind == "message":
            self._fill(out, as_dict(entry.get("message")), where)
        elif kind == "compaction":
            out.kind = "compaction"
            out.content = [text_block(as_str(entry.get("summary")) or "")]
            out.kept_source_ids = self._kept(eid, entry, ids, linear)
            out.metadata = {k: entry[k] for k in ("tokensBefore", "details", "fromHook")
                            if k in entry}
        elif kind == "branch_summary":
            out.content = [text_block(as_str(entry.get("summary")) or "")]
            out.metadata = {"pi_type": "branch_summary", "fromId": entry.get("fromId")}
        elif kind == "custom_message":
            out.content = self._content(entry.get("content"), where)
            out.metadata = {"pi_type": "custom_message", "customType": entry.get("customType")}
            out.role = "system" if entry.get("customType") == "system" else "user"
            out.hidden = entry.get("display") is False
        else:
            raise InvalidInput(f"{where}.type", f"unknown entry type {str(kind)[:40]!r}")
        out.content = check_blocks(out.content, where)
        return out

    def _fill(self, out: ImportedMessage, msg: dict[str, Any], where: str) -> None:
        role = msg.get("role")
        if out.created_at is None:
            out.created_at = to_datetime(msg.get("timestamp"), f"{where}.message.timestamp")
        if role == "user":
            out.content = self._content(msg.get("content"), where)
        elif role == "assistant":
            out.role = "assistant"
            out.content = self._content(msg.get("content"), where)
            out.model = as_str(msg.get("model"))
            out.metadata = {k: msg[k] for k in ("api", "provider", "usage", "stopReason",
                                                "errorMessage") if k in msg}
        elif role == "toolResult":
            out.role = "tool"
            call = as_str(msg.get("toolCallId")) or f"{out.source_id}:call"
            block = tool_result_block(call, "", as_str(msg.get("toolName")))
            block["content"] = self._content(msg.get("content"), where)
            if isinstance(msg.get("isError"), bool):
                block["is_error"] = msg["isError"]
            out.content = [block]
        elif role == "bashExecution":
            text = f"$ {msg.get('command', '')}\n{msg.get('output', '')}"
            out.content = [text_block(text)]
            out.metadata = {"source_role": role, "exitCode": msg.get("exitCode")}
            out.hidden = msg.get("excludeFromContext") is True
        elif isinstance(role, str) and role:
            out.content = self._content(msg.get("content") or msg.get("summary"), where)
            out.metadata = {"source_role": role[:40]}
        else:
            raise InvalidInput(f"{where}.message.role", "missing")

    def _content(self, raw: Any, where: str) -> Blocks:
        if isinstance(raw, str):
            return [text_block(raw)] if raw else []
        blocks: Blocks = []
        for i, part in enumerate(raw if isinstance(raw, list) else []):
            part = as_dict(part)
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str):
                blocks.append(text_block(part["text"]))
            elif kind == "thinking" and as_str(part.get("thinking")):
                blocks.append({"type": "thinking", "thinking": part["thinking"]})
            elif kind == "toolCall":
                call = as_str(part.get("id")) or f"{where}[{i}]"
                blocks.append(tool_use_block(call, as_str(part.get("name")) or "tool",
                                             part.get("arguments")))
            elif kind == "image":
                blocks.append(self._image(part, f"{where}[{i}]"))
        return blocks

    def _image(self, part: dict[str, Any], where: str) -> dict[str, Any]:
        mime = as_str(part.get("mimeType")) or "application/octet-stream"
        try:
            data = base64.b64decode(as_str(part.get("data")) or "", validate=True)
        except (binascii.Error, ValueError):
            return text_block(f"[image not in the session: {mime}]")
        key = self.attachments.add(f"{where}:{content_hash(part.get('data'))[7:23]}", data, mime)
        return {"type": "image", "ref": key, "mime_type": mime}

    def _kept(self, eid: str, entry: dict[str, Any], ids: list[str],
              linear: bool) -> list[str]:
        """The nodes a compaction kept: from its first kept entry down to it, on its path."""
        first: str | None = None
        index = entry.get("firstKeptEntryIndex")
        if linear and isinstance(index, int) and not isinstance(index, bool):
            first = ids[index] if 0 < index < len(ids) else None
        elif isinstance(entry.get("firstKeptEntryId"), str):
            first = entry["firstKeptEntryId"]
        if first is None:
            return []
        path: list[str] = []
        cursor = self.parents.get(eid)
        while cursor is not None:
            path.append(cursor)
            if cursor == first:
                break
            cursor = self.parents.get(cursor)
        if cursor != first:
            return []
        nodes = {m.source_id for m in self.messages}
        return [p for p in reversed(path) if p in nodes]


def _id(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value or len(value) > 200:
        raise InvalidInput(where, "expected an entry id (a short string)")
    return value
