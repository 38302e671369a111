"""OpenAI chat fine-tuning JSONL into the intermediate form (one conversation per line).

A line is `{"messages": [...], "tools": [...]}`; messages are linear. Assistant
`tool_calls` (and the legacy `function_call`) become tool_use blocks, `role: tool`
(and legacy `role: function`) messages become tool_result blocks. Content may be a
string or a list of parts (text, image_url, input_audio, file); inline `data:` URLs
and base64 audio become attachments with their bytes. A preference line
(`input` + `preferred_output` + `non_preferred_output`) becomes a tree whose two
outputs are siblings, the preferred one active. Lines have no ids, so a
conversation's id is the hash of its line's content.
"""

from __future__ import annotations

import base64
import binascii
import os
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
    text_block,
    tool_result_block,
    tool_use_block,
)
from .stream import Input, as_input, iter_lines

FORMAT = "openai_jsonl"
_ROLES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
    "function": "tool",
}

Blocks = list[dict[str, Any]]


def parse(source: str | os.PathLike[str] | Input) -> Iterator[ImportedConversation | ParseError]:
    inp = as_input(source)
    for lineno, raw in iter_lines(inp):
        where = f"{inp.name} line {lineno}"
        if isinstance(raw, InvalidInput):
            yield ParseError(where, str(raw))
        else:
            yield guarded(where, convert, raw)


def convert(raw: Any) -> ImportedConversation:
    record = expect(raw, dict, "line", optional=False)
    conv_id = content_hash(record)
    builder = _Builder(conv_id)
    if "preferred_output" in record:
        current = _preference(record, builder)
    else:
        current = builder.chain(
            expect(record.get("messages"), list, "messages", optional=False), "messages", None
        )
    given = as_dict(record.get("input"))
    tools = record.get("tools") or given.get("tools")
    return ImportedConversation(
        source_format=FORMAT,
        source_id=conv_id,
        title=None,
        created_at=None,
        mode="dialogue",
        messages=builder.messages,
        current_source_id=current,
        attachments=builder.attachments.to_list(),
        metadata={"tools": tools} if tools else {},
    )


def _preference(record: dict[str, Any], builder: _Builder) -> str | None:
    given = expect(record.get("input"), dict, "input", optional=False)
    stem = builder.chain(
        expect(given.get("messages"), list, "input.messages", optional=False),
        "input.messages",
        None,
    )
    rejected = expect(record.get("non_preferred_output"), list, "non_preferred_output") or []
    chosen = builder.chain(
        expect(record["preferred_output"], list, "preferred_output", optional=False),
        "preferred_output",
        stem,
        "preferred",
    )
    builder.chain(rejected, "non_preferred_output", stem, "non_preferred")
    return chosen


class _Builder:
    """Appends messages in chains, naming each `<conversation id>/<path>[i]`."""

    def __init__(self, conv_id: str) -> None:
        self.conv_id = conv_id
        self.messages: list[ImportedMessage] = []
        self.attachments = AttachmentSet()
        self._calls: list[str] = []  # tool calls waiting for their results

    def chain(
        self, items: list[Any], path: str, parent: str | None, preference: str | None = None
    ) -> str | None:
        for i, item in enumerate(items):
            where = f"{path}[{i}]"
            message = self._message(expect(item, dict, where, optional=False), where, parent)
            if preference:
                message.metadata["preference"] = preference
            self.messages.append(message)
            parent = message.source_id
        return parent

    def _message(self, msg: dict[str, Any], where: str, parent: str | None) -> ImportedMessage:
        role = expect(msg.get("role"), str, f"{where}.role", optional=False)
        if role not in _ROLES:
            raise InvalidInput(f"{where}.role", f"unknown role {role!r}")
        mid = f"{self.conv_id}/{where}"
        if _ROLES[role] == "tool":
            blocks = [self._result(msg, role, where)]
        else:
            blocks = (
                self._thinking(msg)
                + self._content(msg.get("content"), f"{where}.content", mid)
                + self._calls_of(msg, where, mid)
            )
        meta: dict[str, Any] = {"source_role": role} if role in ("developer", "function") else {}
        if msg.get("weight") is not None:
            meta["weight"] = msg["weight"]
        name = as_str(msg.get("name"))
        return ImportedMessage(
            mid,
            parent,
            _ROLES[role],
            check_blocks(blocks, f"{where}.content"),
            None,
            author=name,
            metadata=meta,
        )

    def _thinking(self, msg: dict[str, Any]) -> Blocks:
        for key in ("reasoning_content", "thinking", "reasoning"):
            if isinstance(msg.get(key), str) and msg[key]:
                return [{"type": "thinking", "thinking": msg[key]}]
        return []

    def _calls_of(self, msg: dict[str, Any], where: str, mid: str) -> Blocks:
        calls = expect(msg.get("tool_calls"), list, f"{where}.tool_calls") or []
        if isinstance(msg.get("function_call"), dict):
            calls = [*calls, {"id": f"{mid}:function_call", "function": msg["function_call"]}]
        blocks: Blocks = []
        for j, call in enumerate(calls):
            call = expect(call, dict, f"{where}.tool_calls[{j}]", optional=False)
            fn = expect(
                call.get("function"), dict, f"{where}.tool_calls[{j}].function", optional=False
            )
            name = expect(
                fn.get("name"), str, f"{where}.tool_calls[{j}].function.name", optional=False
            )
            call_id = (
                call.get("id")
                if isinstance(call.get("id"), str) and call.get("id")
                else f"{mid}:call{j}"
            )
            blocks.append(tool_use_block(call_id, name, fn.get("arguments")))
            self._calls.append(call_id)
        return blocks

    def _result(self, msg: dict[str, Any], role: str, where: str) -> dict[str, Any]:
        given = msg.get("tool_call_id")
        call_id = (
            given
            if isinstance(given, str) and given
            else (self._calls[0] if self._calls else f"{where}:unknown")
        )
        if call_id in self._calls:
            self._calls.remove(call_id)
        parts = self._content(msg.get("content"), f"{where}.content", call_id)
        text = "".join(p["text"] for p in parts if p["type"] == "text")
        return tool_result_block(call_id, text, as_str(msg.get("name")))

    def _content(self, content: Any, where: str, mid: str) -> Blocks:
        if content is None or content == "":
            return []
        if isinstance(content, str):
            return [text_block(content)]
        parts = expect(content, list, where, optional=False)
        return [
            b
            for i, p in enumerate(parts)
            for b in self._part(expect(p, dict, f"{where}[{i}]", optional=False), f"{mid}#{i}")
        ]

    def _part(self, part: dict[str, Any], key: str) -> Blocks:
        kind = part.get("type")
        if kind in ("text", "input_text", "output_text") and isinstance(part.get("text"), str):
            return [text_block(part["text"])]
        if kind == "refusal" and isinstance(part.get("refusal"), str):
            return [text_block(part["refusal"])]
        if kind == "image_url":
            spec = part.get("image_url")
            url = spec.get("url") if isinstance(spec, dict) else spec
            return [self._file("image", url if isinstance(url, str) else "", key, "image/png")]
        if kind == "input_audio" and isinstance(part.get("input_audio"), dict):
            return [self._audio(part["input_audio"], key)]
        if kind == "file" and isinstance(part.get("file"), dict):
            spec = part["file"]
            return [
                self._file(
                    "document",
                    spec.get("file_data") or spec.get("file_id") or "",
                    key,
                    "application/octet-stream",
                    spec.get("filename"),
                )
            ]
        raise InvalidInput(key, f"unsupported content part type {kind!r}")

    def _file(
        self, kind: str, url: str, key: str, default_mime: str, name: Any = None
    ) -> dict[str, Any]:
        decoded = parse_data_url(url)
        mime = (decoded[0] if decoded else None) or default_mime
        label = name if isinstance(name, str) else (None if decoded else url or None)
        ref = self.attachments.add(key, decoded[1] if decoded else None, mime, label)
        block: dict[str, Any] = {"type": kind, "ref": ref, "mime_type": mime}
        if kind == "document" and isinstance(name, str):
            block["name"] = name
        return block

    def _audio(self, spec: dict[str, Any], key: str) -> dict[str, Any]:
        fmt = spec.get("format") if isinstance(spec.get("format"), str) else "wav"
        try:
            data = base64.b64decode(spec.get("data") or "")
        except (binascii.Error, ValueError, TypeError):
            data = None
        mime = f"audio/{fmt}"
        return {
            "type": "audio",
            "ref": self.attachments.add(key, data or None, mime),
            "mime_type": mime,
        }
