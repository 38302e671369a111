"""Claude.ai data export (`conversations.json`, or the export zip) into the intermediate form.

A conversation is `{uuid, name, created_at, chat_messages: [...]}`; each message has a
`sender` (human/assistant), `content` blocks (text, thinking, tool_use, tool_result;
the flat `text` field is the fallback for old exports), `attachments` whose
`extracted_content` is the file's text, and `files` (uploads without their bytes).
Branches come from `parent_message_uuid` when the export has it; otherwise the
messages are one linear chain in list order.
"""

from __future__ import annotations

import json
import mimetypes
import os
from collections.abc import Iterator
from typing import Any

from ..errors import InvalidInput
from . import tree
from .model import (
    AttachmentSet,
    ImportedConversation,
    ImportedMessage,
    ParseError,
    as_str,
    check_blocks,
    content_hash,
    expect,
    guarded,
    source_label,
    text_block,
    to_datetime,
)
from .stream import Input, as_input, iter_documents

FORMAT = "claude"
#: the parent Claude gives to the first message of a conversation
ROOT_PARENT = "00000000-0000-4000-8000-000000000000"
_ROLES = {"human": "user", "user": "user", "assistant": "assistant", "system": "system"}

Blocks = list[dict[str, Any]]


def parse(source: str | os.PathLike[str] | Input) -> Iterator[ImportedConversation | ParseError]:
    inp = as_input(source)
    for index, raw in iter_documents(inp):
        conv_id = raw.get("uuid") if isinstance(raw, dict) else None
        yield guarded(source_label(inp.name, index, conv_id), convert, raw)


def convert(raw: Any) -> ImportedConversation:
    conv = expect(raw, dict, "conversation", optional=False)
    items = expect(conv.get("chat_messages"), list, "chat_messages", optional=False)
    attachments = AttachmentSet()
    branched = any(isinstance(m, dict) and m.get("parent_message_uuid") for m in items)
    messages: list[ImportedMessage] = []
    for i, item in enumerate(items):
        previous = messages[-1].source_id if messages and not branched else None
        messages.append(_message(item, f"chat_messages[{i}]", previous, branched, attachments))
    messages = tree.order(messages, "chat_messages")
    conv_id = conv.get("uuid")
    return ImportedConversation(
        source_format=FORMAT,
        source_id=conv_id if isinstance(conv_id, str) and conv_id else content_hash(conv),
        title=as_str(conv.get("name")),
        created_at=to_datetime(conv.get("created_at"), "created_at"),
        mode="dialogue",
        messages=messages,
        current_source_id=_current(conv, messages),
        attachments=attachments.to_list(),
        metadata=_conversation_meta(conv),
    )


def _current(conv: dict[str, Any], messages: list[ImportedMessage]) -> str | None:
    wanted = conv.get("current_leaf_message_uuid")
    if isinstance(wanted, str) and any(m.source_id == wanted for m in messages):
        return wanted
    return tree.newest_leaf(messages)


def _conversation_meta(conv: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for key in ("updated_at", "summary", "model"):
        if isinstance(conv.get(key), str) and conv[key]:
            meta[key] = conv[key]
    account = conv.get("account")
    if isinstance(account, dict) and isinstance(account.get("uuid"), str):
        meta["account"] = account["uuid"]
    return meta


def _message(
    item: Any, where: str, previous: str | None, branched: bool, attachments: AttachmentSet
) -> ImportedMessage:
    msg = expect(item, dict, where, optional=False)
    uuid = expect(msg.get("uuid"), str, f"{where}.uuid", optional=False)
    sender = expect(msg.get("sender"), str, f"{where}.sender", optional=False)
    if sender not in _ROLES:
        raise InvalidInput(
            f"{where}.sender", f"unknown sender {sender!r} (expected human or assistant)"
        )
    parent = previous
    if branched:
        parent = expect(msg.get("parent_message_uuid"), str, f"{where}.parent_message_uuid")
        parent = None if parent in (None, ROOT_PARENT) else parent
    blocks = _files(msg, where, attachments) + _content(msg, where)
    meta = {"updated_at": msg["updated_at"]} if isinstance(msg.get("updated_at"), str) else {}
    return ImportedMessage(
        source_id=uuid,
        parent_source_id=parent,
        role=_ROLES[sender],
        content=check_blocks(blocks, f"{where}.content"),
        created_at=to_datetime(msg.get("created_at"), f"{where}.created_at"),
        author="human" if sender == "human" else None,
        metadata=meta,
    )


def _content(msg: dict[str, Any], where: str) -> Blocks:
    raw = expect(msg.get("content"), list, f"{where}.content")
    if not raw:
        text = expect(msg.get("text"), str, f"{where}.text") or ""
        return [text_block(text)] if text else []
    blocks: Blocks = []
    last_tool_id: str | None = None
    for i, item in enumerate(raw):
        block = _block(
            expect(item, dict, f"{where}.content[{i}]", optional=False),
            f"{where}.content[{i}]",
            last_tool_id,
        )
        if block is None:
            continue
        if block["type"] == "tool_use":
            last_tool_id = block["id"]
        blocks.append(block)
    return blocks


def _block(item: dict[str, Any], where: str, last_tool_id: str | None) -> dict[str, Any] | None:
    kind = item.get("type")
    if kind == "text":
        text = expect(item.get("text"), str, f"{where}.text") or ""
        return text_block(text) if text else None
    if kind == "thinking":
        thinking = expect(item.get("thinking"), str, f"{where}.thinking") or ""
        return {"type": "thinking", "thinking": thinking} if thinking else None
    if kind == "tool_use":
        name = expect(item.get("name"), str, f"{where}.name") or "tool"
        tool_input = (
            item.get("input")
            if isinstance(item.get("input"), dict)
            else {"value": item.get("input")}
        )
        tool_id = (
            item.get("id")
            if isinstance(item.get("id"), str) and item.get("id")
            else f"{where}:{name}"
        )
        return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}
    if kind == "tool_result":
        return _tool_result(item, where, last_tool_id)
    text = item.get("text")
    return (
        text_block(text)
        if isinstance(text, str) and text
        else text_block(json.dumps(item, default=str))
    )


def _tool_result(item: dict[str, Any], where: str, last_tool_id: str | None) -> dict[str, Any]:
    parts = item.get("content")
    texts: Blocks = []
    if isinstance(parts, str):
        texts = [text_block(parts)]
    elif isinstance(parts, list):
        for part in parts:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                texts.append(text_block(part["text"]))
            elif isinstance(part, str):
                texts.append(text_block(part))
    tool_id = item.get("tool_use_id") if isinstance(item.get("tool_use_id"), str) else last_tool_id
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": tool_id or f"{where}:unknown",
        "content": texts,
    }
    if isinstance(item.get("name"), str):
        block["name"] = item["name"]
    if isinstance(item.get("is_error"), bool):
        block["is_error"] = item["is_error"]
    return block


def _files(msg: dict[str, Any], where: str, attachments: AttachmentSet) -> Blocks:
    """Documents for `attachments` (their extracted text) and `files` (bytes not exported)."""
    blocks: Blocks = []
    for i, att in enumerate(expect(msg.get("attachments"), list, f"{where}.attachments") or []):
        att = expect(att, dict, f"{where}.attachments[{i}]", optional=False)
        name = as_str(att.get("file_name"))
        text = (
            expect(att.get("extracted_content"), str, f"{where}.attachments[{i}].extracted_content")
            or ""
        )
        data = text.encode("utf-8")
        key = attachments.add(f"{msg.get('uuid')}/attachment/{i}", data, "text/plain", name)
        block: dict[str, Any] = {
            "type": "document",
            "ref": key,
            "mime_type": "text/plain",
            "text": text,
        }
        if name:
            block["name"] = name
        blocks.append(block)
    files = msg.get("files_v2") if isinstance(msg.get("files_v2"), list) else msg.get("files")
    for i, item in enumerate(expect(files, list, f"{where}.files") or []):
        blocks.append(
            _file(
                expect(item, dict, f"{where}.files[{i}]", optional=False),
                f"{msg.get('uuid')}/file/{i}",
                attachments,
            )
        )
    return blocks


def _file(item: dict[str, Any], fallback_key: str, attachments: AttachmentSet) -> dict[str, Any]:
    name = as_str(item.get("file_name"))
    file_id = as_str(item.get("file_uuid")) or fallback_key
    mime = (mimetypes.guess_type(name)[0] if name else None) or "application/octet-stream"
    is_image = item.get("file_kind") == "image" or mime.startswith("image/")
    key = attachments.add(file_id, None, mime, name)
    if is_image:
        return {"type": "image", "ref": key, "mime_type": mime}
    block: dict[str, Any] = {"type": "document", "ref": key, "mime_type": mime}
    if name:
        block["name"] = name
    return block
