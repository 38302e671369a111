"""The intermediate form every importer produces, and the small helpers that build it.

Parsers turn other tools' export files into these plain dataclasses; writing them into
a store is somebody else's job, so nothing here knows about storage. Content is already
loomdb content blocks (see `loomdb.content`), except that blob `ref`s may still be
attachment keys (`attachment:<name>`) that the writer swaps for real blob ids after
storing the `Attachment` bytes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .. import jsondepth
from ..content import validate_blocks
from ..errors import InvalidInput
from ..limits import DEFAULT

ROLES = ("user", "assistant", "system", "tool")
ATTACHMENT_PREFIX = "attachment:"
#: stands in for an attachment key while blocks are checked against the content schema
_PLACEHOLDER_REF = "sha256:" + "0" * 64


@dataclass
class Attachment:
    """A binary payload that must go to the blob store."""

    key: str  # placeholder used in blocks' "ref" until stored, e.g. "attachment:file-abc"
    data: bytes | None  # bytes if present in the file/zip; None if only referenced
    mime_type: str
    name: str | None = None


@dataclass
class ImportedMessage:
    source_id: str
    parent_source_id: str | None
    role: str
    content: list[dict[str, Any]]
    created_at: datetime | None
    author: str | None = None
    model: str | None = None
    hidden: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)
    edited_from_source_id: str | None = None
    tags: list[str] = field(default_factory=list)
    bookmark: str | None = None
    #: "message", or "compaction" for a summary that replaces what came before it
    kind: str = "message"
    #: the options this message sets for what follows (a model, its settings)
    options: dict[str, Any] | None = None
    #: for a compaction: the messages before it (on its path) that it kept verbatim
    kept_source_ids: list[str] = field(default_factory=list)
    #: the stored node this message was exported from, when its line's id names one
    #: (a round trip: see `roundtrip`)
    same_as: str | None = None
    #: the source id an older layout of the same file gave this message (pi's upgrade)
    earlier_source_id: str | None = None


@dataclass
class Head:
    """A named moving pointer of the source (an llm thread): a session ref on import."""

    source_id: str  # the pointer's own id, kept in the ref's origin
    message: str  # the source id of the message it points at
    name: str  # the session name's last part: import/<format>/<name>
    title: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # kept in the ref's origin


@dataclass
class ImportedConversation:
    source_format: str
    source_id: str
    title: str | None
    created_at: datetime | None
    mode: str  # "dialogue" or "buffer"
    messages: list[ImportedMessage]  # parents always before children
    current_source_id: str | None
    attachments: list[Attachment] = field(default_factory=list)
    system: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    #: the source's own sessions; when given, one session ref each replaces the one
    #: session of the active branch
    heads: list[Head] = field(default_factory=list)
    #: how many messages the source holds for this conversation, counted apart from the
    #: conversion; the import says so when it wrote (or found) another number
    source_count: int | None = None
    #: what the parser must say although nothing failed (a fragment's missing root...)
    warnings: list[str] = field(default_factory=list)
    #: a subagent's run: {"conversation", "message", "task", "summary"} (source ids of the
    #: parent conversation, the message that spawned it and the one carrying its result)
    spawn: dict[str, Any] | None = None
    #: a part of a conversation too big to hold whole: the next item is its next part
    #: (the same source id, the messages that follow); the last part (`more` False)
    #: carries what only the end tells (metadata, warnings, the current message). The
    #: import writes every part in one transaction (see `importer`).
    more: bool = False
    #: the conversations (source ids, same format) this one was forked from, whose
    #: messages it holds again under the same source ids (Claude Code's
    #: `--fork-session` copies the session's lines): see `roundtrip`
    forked_from: list[str] = field(default_factory=list)


@dataclass
class ParseError:
    """One conversation that could not be imported; the others still are."""

    where: str
    reason: str


@dataclass
class EmptyConversation(ParseError):
    """A well-formed conversation with no message in it: nothing to import.

    A ParseError for the parsers' callers (there is no conversation to hand over), but
    not a fault of the file: the importer counts it as skipped and says so in a warning
    instead of an error, since every real export holds a few (a chat opened, never used).
    """


# ---------------------------------------------------------------- content blocks


def text_block(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def check_blocks(blocks: list[dict[str, Any]], where: str) -> list[dict[str, Any]]:
    """Validate blocks against the content schema, accepting attachment keys as refs.

    An empty list becomes one empty text block: a message with a role but no content
    is still a message.
    """
    if not blocks:
        blocks = [text_block("")]
    validate_blocks([_with_placeholder_refs(b) for b in blocks], where)
    return blocks


def _with_placeholder_refs(block: dict[str, Any]) -> dict[str, Any]:
    out = dict(block)
    for key in ("ref", "thumbnail_ref"):
        if isinstance(out.get(key), str) and out[key].startswith(ATTACHMENT_PREFIX):
            out[key] = _PLACEHOLDER_REF
    if out.get("type") == "tool_result" and isinstance(out.get("content"), list):
        out["content"] = [
            _with_placeholder_refs(p) if isinstance(p, dict) else p for p in out["content"]
        ]
    return out


class AttachmentSet:
    """The attachments of one conversation, one per key, in order of first use."""

    def __init__(self) -> None:
        self._items: dict[str, Attachment] = {}

    def add(self, key: str, data: bytes | None, mime_type: str, name: str | None = None) -> str:
        key = key if key.startswith(ATTACHMENT_PREFIX) else ATTACHMENT_PREFIX + key
        known = self._items.get(key)
        if known is None:
            self._items[key] = Attachment(key, data, mime_type, name)
        elif known.data is None and data is not None:
            known.data = data
        return key

    def __len__(self) -> int:
        return len(self._items)

    def to_list(self) -> list[Attachment]:
        return list(self._items.values())


# ---------------------------------------------------------------- values


def to_datetime(value: Any, where: str) -> datetime | None:
    """A UTC datetime from epoch seconds (or ms/us/ns by magnitude) or an ISO 8601 string."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise InvalidInput(where, f"expected a time, got {value!r}")
    if isinstance(value, (int, float)):
        return _from_epoch(float(value), where)
    if isinstance(value, str):
        return _from_iso(value, where)
    raise InvalidInput(where, f"expected a time, got {type(value).__name__}")


def _from_epoch(seconds: float, where: str) -> datetime:
    for _ in range(3):  # milliseconds, microseconds, nanoseconds
        if abs(seconds) < 1e11:
            break
        seconds /= 1000.0
    try:
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        raise InvalidInput(where, f"time {seconds!r} is out of range") from None


def _from_iso(value: str, where: str) -> datetime:
    text = value.strip()
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        try:
            return _from_epoch(float(text), where)
        except ValueError:
            raise InvalidInput(where, f"not a time: {value!r}") from None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def content_hash(value: Any) -> str:
    """A stable id for a source object that has none of its own."""
    body = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()


def expect(value: Any, kind: type | tuple[type, ...], where: str, *, optional: bool = True) -> Any:
    """Return `value` if it has the expected JSON type (None allowed when optional)."""
    if value is None and optional:
        return None
    if isinstance(value, bool) and kind in (int, float, (int, float)):
        raise InvalidInput(where, f"expected a number, got {value!r}")
    if not isinstance(value, kind):
        raise InvalidInput(where, f"expected {_kind_name(kind)}, got {_json_type(value)}")
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names = {
        str: "a string",
        dict: "an object",
        list: "an array",
        int: "an integer",
        float: "a number",
        bool: "a boolean",
    }
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _json_type(value: Any) -> str:
    names = {
        str: "a string",
        dict: "an object",
        list: "an array",
        int: "an integer",
        float: "a number",
        bool: "a boolean",
    }
    if value is None:
        return "null"
    for kind, name in names.items():
        if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
            return name
    return type(value).__name__


def source_label(name: str, index: int, conv_id: Any = None, *, line: bool = False) -> str:
    """How a conversation is named in errors: `file[3] (id 6f1...)`, or `file line 4`."""
    label = f"{name} line {index}" if line else f"{name}[{index}]"
    if isinstance(conv_id, str) and conv_id:
        label += f" (id {conv_id})"
    return label


def guarded(
    where: str, build: Callable[..., ImportedConversation], *args: Any
) -> ImportedConversation | ParseError:
    """Run `build(*args)` for one conversation; any structural problem becomes its ParseError."""
    try:
        conversation = build(*args)
    except InvalidInput as exc:
        return ParseError(where, str(exc))
    except (TypeError, AttributeError, KeyError, ValueError) as exc:
        return ParseError(where, f"unexpected structure ({type(exc).__name__}: {exc})")
    if not conversation.messages:
        return EmptyConversation(where, "the conversation has no messages to import")
    return conversation


def str_list(value: Any) -> list[str]:
    """The strings of a JSON array (anything else gives an empty list)."""
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


_DATA_URL = re.compile(r"^data:([\w.+-]+/[\w.+-]+)?(?:;[\w-]+=[^;,]*)*(;base64)?,(.*)$", re.S)


def parse_data_url(url: str) -> tuple[str | None, bytes] | None:
    """(mime type, bytes) of a base64 `data:` URL; None for anything else."""
    match = _DATA_URL.match(url)
    if not match or not match.group(2):
        return None
    try:
        return match.group(1), base64.b64decode(match.group(3))
    except (binascii.Error, ValueError):
        return None


def tool_use_block(tool_id: str, name: str, arguments: Any) -> dict[str, Any]:
    """A tool_use block; JSON-string arguments are decoded, non-objects wrapped."""
    if isinstance(arguments, str):
        try:
            arguments = jsondepth.loads(arguments, DEFAULT.json_depth) if arguments.strip() else {}
        except ValueError:  # not JSON, or nested too deeply: kept as the string
            return {
                "type": "tool_use",
                "id": tool_id,
                "name": name,
                "input": {"arguments": arguments},
            }
    if not isinstance(arguments, dict):
        arguments = {} if arguments is None else {"value": arguments}
    return {"type": "tool_use", "id": tool_id, "name": name, "input": arguments}


def tool_result_block(tool_use_id: str, text: str, name: str | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": [text_block(text)] if text else [],
    }
    if name:
        block["name"] = name
    return block


def as_dict(value: Any) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one (for optional sub-objects)."""
    return value if isinstance(value, dict) else {}


def as_str(value: Any) -> str | None:
    """`value` if it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def missing_block(block: dict[str, Any], att: Attachment | None) -> dict[str, Any]:
    """The honest stand-in for a file the export names but does not hold."""
    kind = block.get("type", "file")
    label = (att.name if att and att.name else None) or block.get("name")
    if not label:
        label = str(block.get("ref", ""))[len(ATTACHMENT_PREFIX):]
    mime = (att.mime_type if att else None) or block.get("mime_type")
    text = f"[{kind} not in the export: {label}" + (f" ({mime})" if mime else "") + "]"
    if isinstance(block.get("alt_text"), str) and block["alt_text"]:
        text += f"\n{block['alt_text']}"
    if isinstance(block.get("transcript"), str) and block["transcript"]:
        text += f"\n{block['transcript']}"
    if isinstance(block.get("text"), str) and block["text"]:
        text += f"\n{block['text']}"
    return {"type": "text", "text": text}
