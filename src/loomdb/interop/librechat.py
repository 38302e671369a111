"""LibreChat conversation exports into the intermediate form.

One export is `{conversationId, title, options, messages: [...]}` (or a list of
them). Messages link to `parentMessageId`, the first one to the all-zero id; the
"recursive" export nests replies in `children` instead, which is flattened here (the
older recursive export holds them under `messagesTree` instead of `messages`).
Text is `text`, or the `content` parts of agent messages (text, think, tool_call).
LibreChat does not record which branch was last shown, so the newest leaf is taken
as the active one; `options.promptPrefix` is the system prompt.
"""

from __future__ import annotations

import json
import mimetypes
import os
from collections.abc import Iterator
from typing import Any

from . import tree
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
    source_label,
    text_block,
    to_datetime,
)
from .stream import Input, as_input, iter_documents, loads

FORMAT = "librechat"
NO_PARENT = "00000000-0000-0000-0000-000000000000"

Blocks = list[dict[str, Any]]


def parse(source: str | os.PathLike[str] | Input) -> Iterator[ImportedConversation | ParseError]:
    inp = as_input(source)
    for index, raw in iter_documents(inp):
        conv_id = raw.get("conversationId") if isinstance(raw, dict) else None
        yield guarded(source_label(inp.name, index, conv_id), convert, raw)


def convert(raw: Any) -> ImportedConversation:
    conv = expect(raw, dict, "conversation", optional=False)
    key = "messages" if "messages" in conv or "messagesTree" not in conv else "messagesTree"
    flat = _flatten(expect(conv.get(key), list, key, optional=False))
    attachments = AttachmentSet()
    messages = tree.order([_message(msg, where, attachments) for msg, where in flat], "messages")
    options = as_dict(conv.get("options"))
    conv_id = conv.get("conversationId")
    meta: dict[str, Any] = {"current_chosen_by": "newest_leaf"}
    for key in ("endpoint", "exportAt"):
        if isinstance(conv.get(key), str):
            meta[key] = conv[key]
    if isinstance(options.get("model"), str):
        meta["model"] = options["model"]
    title = conv.get("title") or options.get("title")
    return ImportedConversation(
        source_format=FORMAT,
        source_id=conv_id if isinstance(conv_id, str) and conv_id else content_hash(conv),
        title=as_str(title),
        created_at=to_datetime(conv.get("createdAt"), "createdAt")
        or (messages[0].created_at if messages else None),
        mode="dialogue",
        messages=messages,
        current_source_id=tree.newest_leaf(messages),
        attachments=attachments.to_list(),
        system=as_str(options.get("promptPrefix")),
        metadata=meta,
    )


def _flatten(items: list[Any]) -> list[tuple[dict[str, Any], str]]:
    """Messages in document order with their JSON paths, nested `children` included."""
    out: list[tuple[dict[str, Any], str]] = []
    stack = [(item, f"messages[{i}]", None) for i, item in reversed(list(enumerate(items)))]
    while stack:
        item, where, parent = stack.pop()
        msg = expect(item, dict, where, optional=False)
        if parent is not None and not msg.get("parentMessageId"):
            msg = {**msg, "parentMessageId": parent}
        out.append((msg, where))
        children = expect(msg.get("children"), list, f"{where}.children") or []
        stack.extend(
            (c, f"{where}.children[{j}]", msg.get("messageId"))
            for j, c in reversed(list(enumerate(children)))
        )
    return out


def _message(msg: dict[str, Any], where: str, attachments: AttachmentSet) -> ImportedMessage:
    mid = expect(msg.get("messageId"), str, f"{where}.messageId", optional=False)
    parent = expect(msg.get("parentMessageId"), str, f"{where}.parentMessageId")
    by_user = msg.get("isCreatedByUser")
    role = (
        "user"
        if by_user is True or (by_user is None and msg.get("sender") == "User")
        else "assistant"
    )
    model = as_str(msg.get("model"))
    meta = {
        k: msg[k]
        for k in ("endpoint", "finish_reason", "error", "unfinished", "tokenCount")
        if msg.get(k) not in (None, False)
    }
    sender = as_str(msg.get("sender"))
    return ImportedMessage(
        source_id=mid,
        parent_source_id=None if parent in (None, "", NO_PARENT) else parent,
        role=role,
        content=check_blocks(
            _files(msg, where, attachments) + _content(msg, where), f"{where}.content"
        ),
        created_at=to_datetime(msg.get("createdAt"), f"{where}.createdAt"),
        author="human" if role == "user" else sender or model,
        model=model,
        metadata=meta,
    )


def _files(msg: dict[str, Any], where: str, attachments: AttachmentSet) -> Blocks:
    """Uploaded files: referenced by id, their bytes are not in the export."""
    blocks: Blocks = []
    for i, item in enumerate(expect(msg.get("files"), list, f"{where}.files") or []):
        if not isinstance(item, dict):
            continue
        name = as_str(item.get("filename"))
        mime = (
            item.get("type") if isinstance(item.get("type"), str) and "/" in item["type"] else None
        )
        mime = (
            mime or (mimetypes.guess_type(name)[0] if name else None) or "application/octet-stream"
        )
        file_id = as_str(item.get("file_id")) or f"{where}.files[{i}]"
        key = attachments.add(file_id, None, mime, name)
        block: dict[str, Any] = {
            "type": "image" if mime.startswith("image/") else "document",
            "ref": key,
            "mime_type": mime,
        }
        if block["type"] == "document" and name:
            block["name"] = name
        blocks.append(block)
    return blocks


def _content(msg: dict[str, Any], where: str) -> Blocks:
    parts = expect(msg.get("content"), list, f"{where}.content")
    if not parts:
        text = expect(msg.get("text"), str, f"{where}.text") or ""
        return [text_block(text)] if text else []
    blocks: Blocks = []
    for part in parts:
        if isinstance(part, dict):
            blocks.extend(_part(part))
    return blocks


def _part(part: dict[str, Any]) -> Blocks:
    kind = part.get("type")
    value = part.get(kind) if isinstance(kind, str) else None
    if kind == "text":
        text = value.get("value") if isinstance(value, dict) else value
        return [text_block(text)] if isinstance(text, str) and text else []
    if kind == "think" and isinstance(value, str) and value:
        return [{"type": "thinking", "thinking": value}]
    if kind == "tool_call" and isinstance(value, dict):
        return _tool_call(value)
    return [text_block(json.dumps(part, ensure_ascii=False, default=str))]


def _tool_call(call: dict[str, Any]) -> Blocks:
    call_id = call.get("id") if isinstance(call.get("id"), str) else "tool_call"
    name = call.get("name") if isinstance(call.get("name"), str) else "tool"
    args = call.get("args")
    if isinstance(args, str):
        try:
            args = loads(args)
        except ValueError:  # not JSON, or nested too deeply: kept as the string
            pass
    blocks: Blocks = [
        {
            "type": "tool_use",
            "id": call_id,
            "name": name,
            "input": args if isinstance(args, dict) else {"value": args},
        }
    ]
    output = call.get("output")
    if isinstance(output, str):
        blocks.append(
            {
                "type": "tool_result",
                "tool_use_id": call_id,
                "content": [text_block(output)],
                "name": name,
            }
        )
    return blocks
