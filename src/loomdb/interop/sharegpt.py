"""ShareGPT-style datasets (JSON list or JSONL) into the intermediate form, as linear chats.

A record is `{"conversations": [{"from", "value"}], "system", "tools", "images"}`
(`from`: human/gpt/system/function_call/observation) or the LLaMA-Factory variant
`{"messages": [{"role", "content"}], "images"}`. A `function_call` turn holds JSON
`{"name", "arguments"}` (or a list of them) and becomes tool_use blocks; the
following `observation` turn becomes their tool_result. Each `<image>` (and
`<audio>`) placeholder takes the next entry of `images` (`audios`) in order: an
image block whose attachment holds the file's bytes when it sits beside the dataset
(or in the same zip), else None. Files are read only through `Input.read_beside`
(see `loomdb.interop.files`): an entry that may not be read is a warning. Records without an `id` are named by content hash.
"""

from __future__ import annotations

import json
import mimetypes
import os
import re
from collections.abc import Iterator
from typing import Any

from ..errors import InvalidInput
from .model import (
    AttachmentSet,
    ImportedConversation,
    ImportedMessage,
    ParseError,
    as_dict,
    as_str,
    check_blocks,
    content_hash,
    expect,
    guarded,
    parse_data_url,
    source_label,
    text_block,
    tool_result_block,
    tool_use_block,
)
from .stream import Input, as_input, first_char, iter_documents, iter_lines, loads

FORMAT = "sharegpt"
_ROLES = {
    "human": "user",
    "user": "user",
    "gpt": "assistant",
    "assistant": "assistant",
    "chatgpt": "assistant",
    "bard": "assistant",
    "bing": "assistant",
    "model": "assistant",
    "system": "system",
    "function_call": "assistant",
    "observation": "tool",
    "function": "tool",
    "tool": "tool",
}
_MEDIA = {"<image>": ("images", "image"), "<audio>": ("audios", "audio")}
_PLACEHOLDER = re.compile("(" + "|".join(map(re.escape, _MEDIA)) + ")")

Blocks = list[dict[str, Any]]


def parse(source: str | os.PathLike[str] | Input) -> Iterator[ImportedConversation | ParseError]:
    inp = as_input(source)
    if _is_jsonl(inp):
        for lineno, raw in iter_lines(inp):
            where = f"{inp.name} line {lineno}"
            yield (
                ParseError(where, str(raw))
                if isinstance(raw, InvalidInput)
                else guarded(where, convert, raw, inp)
            )
        return
    for index, raw in iter_documents(inp):
        record_id = raw.get("id") if isinstance(raw, dict) else None
        yield guarded(source_label(inp.name, index, record_id), convert, raw, inp)


def _is_jsonl(inp: Input) -> bool:
    if (inp.member or inp.path.name).endswith(".jsonl"):
        return True
    head = inp.peek()
    return first_char(head) == "{" and b"\n{" in head.strip()


def convert(raw: Any, inp: Input) -> ImportedConversation:
    record = expect(raw, dict, "record", optional=False)
    conv_id = (
        record.get("id")
        if isinstance(record.get("id"), (str, int)) and not isinstance(record.get("id"), bool)
        else None
    )
    conv_id = str(conv_id) if conv_id not in (None, "") else content_hash(record)
    builder = _Builder(conv_id, record, inp)
    if "conversations" in record:
        turns = expect(record["conversations"], list, "conversations", optional=False)
        keys = ("from", "value", "conversations")
    else:
        turns = expect(record.get("messages"), list, "messages", optional=False)
        keys = ("role", "content", "messages")
    for i, turn in enumerate(turns):
        builder.add(expect(turn, dict, f"{keys[2]}[{i}]", optional=False), keys, f"{keys[2]}[{i}]")
    builder.check_media_used()
    system = as_str(record.get("system"))
    return ImportedConversation(
        source_format=FORMAT,
        source_id=conv_id,
        title=None,
        created_at=None,
        mode="dialogue",
        messages=builder.messages,
        current_source_id=builder.messages[-1].source_id if builder.messages else None,
        attachments=builder.attachments.to_list(),
        system=system,
        metadata={"tools": record["tools"]} if record.get("tools") else {},
        warnings=builder.warnings,
    )


class _Builder:
    """Appends turns as one chain, handing out media files and tool-call ids in order."""

    def __init__(self, conv_id: str, record: dict[str, Any], inp: Input) -> None:
        self.conv_id = conv_id
        self.inp = inp
        self.messages: list[ImportedMessage] = []
        self.attachments = AttachmentSet()
        self.media = {
            field: expect(record.get(field), list, field) or [] for field, _ in _MEDIA.values()
        }
        self.used = {field: 0 for field in self.media}
        self.pending: list[tuple[str, str]] = []  # (tool_use id, name) awaiting a result
        self.warnings: list[str] = []  # media files named but not read, and why

    def add(self, turn: dict[str, Any], keys: tuple[str, str, str], where: str) -> None:
        speaker = expect(turn.get(keys[0]), str, f"{where}.{keys[0]}", optional=False)
        if speaker not in _ROLES:
            raise InvalidInput(f"{where}.{keys[0]}", f"unknown speaker {speaker!r}")
        value = turn.get(keys[1])
        mid = f"{self.conv_id}/{len(self.messages)}"
        if speaker == "function_call":
            blocks = self._calls(value, f"{where}.{keys[1]}", mid)
        elif _ROLES[speaker] == "tool":
            blocks = [self._result(value, where, turn.get("tool_call_id"))]
        else:
            blocks = self._text(expect(value, str, f"{where}.{keys[1]}") or "", where)
            blocks += self._openai_calls(turn.get("tool_calls"), f"{where}.tool_calls", mid)
        parent = self.messages[-1].source_id if self.messages else None
        meta = (
            {"source_role": speaker}
            if speaker not in ("human", "gpt", "user", "assistant", "system")
            else {}
        )
        self.messages.append(
            ImportedMessage(
                mid, parent, _ROLES[speaker], check_blocks(blocks, where), None, metadata=meta
            )
        )

    def _text(self, value: str, where: str) -> Blocks:
        blocks: Blocks = []
        for piece in _PLACEHOLDER.split(value):
            if piece in _MEDIA:
                blocks.append(self._media(piece, where))
            elif piece:
                blocks.append(text_block(piece))
        return blocks

    def _media(self, placeholder: str, where: str) -> dict[str, Any]:
        field, kind = _MEDIA[placeholder]
        index = self.used[field]
        if index >= len(self.media[field]):
            raise InvalidInput(
                where,
                f"more {placeholder} placeholders than entries in {field!r} ({len(self.media[field])})",
            )
        self.used[field] += 1
        entry = expect(self.media[field][index], str, f"{field}[{index}]", optional=False)
        decoded = parse_data_url(entry)
        mime = (
            (decoded[0] if decoded else None)
            or mimetypes.guess_type(entry)[0]
            or "application/octet-stream"
        )
        data, why = decoded[1] if decoded else None, None
        if decoded is None and "://" not in entry:
            data, why = self.inp.read_beside(entry)
        if why is not None:
            self.warnings.append(f"{where}: {field}[{index}] {entry!r}: {why}")
        key = self.attachments.add(
            f"{self.conv_id}/{field}/{index}" if decoded else entry,
            data,
            mime,
            None if decoded else entry,
        )
        return {"type": kind, "ref": key, "mime_type": mime}

    def check_media_used(self) -> None:
        for field, count in self.used.items():
            if count != len(self.media[field]):
                raise InvalidInput(
                    field, f"{len(self.media[field])} entries but {count} placeholders use them"
                )

    def _calls(self, value: Any, where: str, mid: str) -> Blocks:
        try:
            calls = loads(value, self.inp.limits, where) if isinstance(value, str) else value
        except ValueError as exc:
            raise InvalidInput(
                where, f"a function_call must hold JSON {{name, arguments}}: {exc}"
            ) from None
        calls = calls if isinstance(calls, list) else [calls]
        blocks: Blocks = []
        for j, call in enumerate(calls):
            call = expect(call, dict, f"{where}[{j}]", optional=False)
            name = expect(call.get("name"), str, f"{where}[{j}].name", optional=False)
            blocks.append(
                tool_use_block(
                    f"{mid}:call{j}", name, call.get("arguments", call.get("parameters"))
                )
            )
            self.pending.append((blocks[-1]["id"], name))
        return blocks

    def _openai_calls(self, calls: Any, where: str, mid: str) -> Blocks:
        """OpenAI-style `tool_calls` on a `messages` turn."""
        blocks: Blocks = []
        for j, call in enumerate(expect(calls, list, where) or []):
            fn = as_dict(expect(call, dict, f"{where}[{j}]", optional=False).get("function"))
            name = expect(fn.get("name"), str, f"{where}[{j}].function.name", optional=False)
            call_id = as_str(call.get("id")) or f"{mid}:call{j}"
            blocks.append(tool_use_block(call_id, name, fn.get("arguments")))
            self.pending.append((call_id, name))
        return blocks

    def _result(self, value: Any, where: str, given_id: Any = None) -> dict[str, Any]:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        known = [p for p in self.pending if p[0] == given_id]
        if known:
            self.pending.remove(known[0])
            call_id, name = known[0]
        elif self.pending:
            call_id, name = self.pending.pop(0)
        else:
            call_id, name = as_str(given_id) or f"{where}:unknown", None
        return tool_result_block(call_id, text, name)
