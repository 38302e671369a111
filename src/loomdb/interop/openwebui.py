"""Open WebUI chat exports into the intermediate form.

The export is a list of `{id, title, chat: {...}, created_at, ...}` records, or one
chat object on its own. The tree is `chat.history.messages` (a map of id ->
message with `parentId` / `childrenIds`) and `chat.history.currentId` is the active
leaf; old exports without `history` have only the flat `messages` list with
`parentId`. Reasoning that Open WebUI folds into the text as
`<details type="reasoning">` becomes a thinking block; images sent as data URLs
become attachments with their bytes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

from ..errors import InvalidInput
from . import tree
from .model import (
    ROLES,
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
    str_list,
    text_block,
    to_datetime,
)
from .stream import Input, RecordingDict, as_input, duplicate_keys, iter_documents

FORMAT = "openwebui"
_REASONING = re.compile(
    r'<details type="reasoning"[^>]*>\s*(?:<summary>.*?</summary>)?(.*?)</details>\s*', re.S
)

Blocks = list[dict[str, Any]]


def parse(source: str | os.PathLike[str] | Input) -> Iterator[ImportedConversation | ParseError]:
    inp = as_input(source)
    for index, raw in iter_documents(inp, map_type=RecordingDict):
        yield guarded(source_label(inp.name, index, _record_id(raw)), convert, raw)


def _record_id(raw: Any) -> str | None:
    if not isinstance(raw, dict):
        return None
    chat = as_dict(raw.get("chat"))
    for value in (raw.get("id"), chat.get("id")):
        if isinstance(value, str) and value:
            return value
    return None


def convert(raw: Any) -> ImportedConversation:
    record = expect(raw, dict, "chat", optional=False)
    chat = expect(record["chat"], dict, "chat", optional=False) if "chat" in record else record
    attachments = AttachmentSet()
    items, current = _history(chat)
    messages = tree.order(
        [_message(mid, msg, attachments) for mid, msg in items], "history.messages", _rank(items)
    )
    current, meta = _current(current, messages)
    meta.update(_chat_meta(record, chat))
    title = record.get("title") or chat.get("title")
    return ImportedConversation(
        source_format=FORMAT,
        source_id=_record_id(record) or content_hash(record),
        title=as_str(title),
        created_at=to_datetime(record.get("created_at", chat.get("timestamp")), "created_at"),
        mode="dialogue",
        messages=messages,
        current_source_id=current,
        attachments=attachments.to_list(),
        system=_system(chat),
        metadata=meta,
    )


def _current(current: Any, messages: list[ImportedMessage]) -> tuple[str | None, dict[str, Any]]:
    """`currentId` when it names a message, else the newest leaf (and why)."""
    if isinstance(current, str) and any(m.source_id == current for m in messages):
        return current, {}
    why = "missing" if current is None else f"unknown: {current!r}"
    return tree.newest_leaf(messages), {"current_node": why, "current_chosen_by": "newest_leaf"}


def _chat_meta(record: dict[str, Any], chat: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if str_list(chat.get("models")):
        meta["models"] = str_list(chat.get("models"))
    if str_list(as_dict(record.get("meta")).get("tags")):
        meta["tags"] = str_list(as_dict(record.get("meta")).get("tags"))
    return meta


def _history(chat: dict[str, Any]) -> tuple[list[tuple[str, dict[str, Any]]], Any]:
    """(id, message) pairs from `history.messages`, else the flat `messages` list."""
    history = expect(chat.get("history"), dict, "history")
    if history and history.get("messages") is not None:
        table = expect(history["messages"], dict, "history.messages", optional=False)
        dupes = duplicate_keys(table)
        if dupes:
            raise InvalidInput("history.messages", f"duplicate message ids: {', '.join(dupes[:5])}")
        pairs = [
            (key, expect(msg, dict, f"history.messages.{key}", optional=False))
            for key, msg in table.items()
        ]
        for key, msg in pairs:
            if msg.get("id", key) != key:
                raise InvalidInput(
                    f"history.messages.{key}",
                    f"the message's id {msg.get('id')!r} differs from its key",
                )
        return pairs, history.get("currentId")
    flat = expect(chat.get("messages"), list, "messages", optional=False)
    pairs = []
    for i, msg in enumerate(flat):
        msg = expect(msg, dict, f"messages[{i}]", optional=False)
        pairs.append((expect(msg.get("id"), str, f"messages[{i}].id", optional=False), msg))
    return pairs, pairs[-1][0] if pairs else None


def _rank(items: list[tuple[str, dict[str, Any]]]) -> dict[str, int]:
    """Sibling order from `childrenIds` (Open WebUI shows children in that order)."""
    children = {mid: str_list(msg.get("childrenIds")) for mid, msg in items}
    return tree.preorder_rank(children, [mid for mid, msg in items if not msg.get("parentId")])


def _message(mid: str, msg: dict[str, Any], attachments: AttachmentSet) -> ImportedMessage:
    where = f"history.messages.{mid}"
    role = expect(msg.get("role"), str, f"{where}.role", optional=False)
    parent = expect(msg.get("parentId"), str, f"{where}.parentId")
    model = as_str(msg.get("model"))
    blocks = _files(msg, where, attachments) + _text(
        expect(msg.get("content"), str, f"{where}.content") or ""
    )
    meta: dict[str, Any] = {}
    if role not in ROLES:
        meta["source_role"] = role
    for key in ("modelName", "done", "usage", "error"):
        if msg.get(key) is not None:
            meta[key] = msg[key]
    return ImportedMessage(
        source_id=mid,
        parent_source_id=parent or None,
        role=role if role in ROLES else "assistant",
        content=check_blocks(blocks, f"{where}.content"),
        created_at=to_datetime(msg.get("timestamp"), f"{where}.timestamp"),
        author=msg.get("modelName") if isinstance(msg.get("modelName"), str) else model,
        model=model,
        metadata=meta,
    )


def _text(content: str) -> Blocks:
    """Thinking blocks for folded reasoning, then the visible text."""
    blocks: Blocks = []
    for match in _REASONING.finditer(content):
        thought = "\n".join(
            line.removeprefix("> ").removeprefix(">")
            for line in match.group(1).strip().splitlines()
        )
        if thought:
            blocks.append({"type": "thinking", "thinking": thought})
    visible = _REASONING.sub("", content) if blocks else content
    return blocks + ([text_block(visible)] if visible else [])


def _files(msg: dict[str, Any], where: str, attachments: AttachmentSet) -> Blocks:
    blocks: Blocks = []
    for i, item in enumerate(expect(msg.get("files"), list, f"{where}.files") or []):
        if not isinstance(item, dict):
            continue
        url = as_str(item.get("url")) or ""
        mime, data = parse_data_url(url) or (None, None)
        name = as_str(item.get("name"))
        is_image = item.get("type") == "image" or (mime or "").startswith("image/")
        mime = mime or ("image/png" if is_image else "application/octet-stream")
        key = attachments.add(f"{where}/files/{i}", data, mime, name)
        block: dict[str, Any] = {
            "type": "image" if is_image else "document",
            "ref": key,
            "mime_type": mime,
        }
        if not is_image and name:
            block["name"] = name
        blocks.append(block)
    return blocks


def _system(chat: dict[str, Any]) -> str | None:
    value = chat.get("system")
    if not isinstance(value, str):
        params = chat.get("params")
        value = params.get("system") if isinstance(params, dict) else None
    return as_str(value)
