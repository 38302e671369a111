"""Chatbot UI exports (mckaywrigley/chatbot-ui's "Export data") into the intermediate form.

The export is one object `{"version", "history": [conversations], "folders": [...],
"prompts": [...]}` (version 1 was the bare list of conversations). A conversation is
`{id, name, messages: [{role, content}], model: {id, name, ...}, prompt, temperature,
folderId}`: a linear chat. Each becomes a linear tree: `prompt` is its system context,
`model.id` the author of its answers, `temperature` and the folder's name are kept in
its metadata. `prompts` are saved prompt templates, not conversations: left out, and
the first conversation's metadata says how many there were. Messages carry no ids or
times, so their source ids are their positions and their content stays as written.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from ..errors import InvalidInput
from .model import (
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
)
from .stream import Input, as_input, iter_documents

FORMAT = "chatbot_ui"
_ROLES = {"user": "user", "assistant": "assistant", "system": "system"}


def parse(source: str | os.PathLike[str] | Input) -> Iterator[ImportedConversation | ParseError]:
    inp = as_input(source)
    for _index, raw in iter_documents(inp):
        if isinstance(raw, dict) and isinstance(raw.get("history"), list):
            yield from _export(raw, inp.name)
        else:  # version 1: the list of conversations itself
            yield guarded(source_label(inp.name, _index, _id(raw)), convert, raw, {})


def looks_like(record: Any) -> bool:
    """A Chatbot UI export: its `history` is a list (Open WebUI's is an object)."""
    return isinstance(record, dict) and isinstance(record.get("history"), list)


def _export(raw: dict[str, Any], name: str) -> Iterator[ImportedConversation | ParseError]:
    given = raw.get("folders")
    listed: list[Any] = given if isinstance(given, list) else []
    folders: dict[Any, str | None] = {f["id"]: as_str(f.get("name")) for f in listed
                                      if isinstance(f, dict) and isinstance(f.get("id"), str)}
    prompts = raw.get("prompts")
    for index, conv in enumerate(raw["history"]):
        item = guarded(source_label(f"{name} history", index, _id(conv)), convert, conv, folders)
        if index == 0 and isinstance(item, ImportedConversation) and isinstance(prompts, list):
            item.metadata["prompts_left_out"] = len(prompts)
        yield item


def _id(raw: Any) -> Any:
    return raw.get("id") if isinstance(raw, dict) else None


def convert(raw: Any, folders: dict[Any, str | None]) -> ImportedConversation:
    conv = expect(raw, dict, "conversation", optional=False)
    items = expect(conv.get("messages"), list, "messages", optional=False)
    model = as_str(as_dict(conv.get("model")).get("id"))
    messages: list[ImportedMessage] = []
    for i, item in enumerate(items):
        where = f"messages[{i}]"
        msg = expect(item, dict, where, optional=False)
        role = expect(msg.get("role"), str, f"{where}.role", optional=False)
        if role not in _ROLES:
            raise InvalidInput(f"{where}.role", f"unknown role {role!r}")
        text = expect(msg.get("content"), str, f"{where}.content") or ""
        messages.append(ImportedMessage(
            source_id=str(i), parent_source_id=str(i - 1) if i else None, role=_ROLES[role],
            content=check_blocks([text_block(text)] if text else [], where), created_at=None,
            model=model if role == "assistant" else None,
        ))
    meta: dict[str, Any] = {}
    if isinstance(conv.get("temperature"), (int, float)):
        meta["temperature"] = conv["temperature"]
    if model:
        meta["model"] = model
    folder_id = conv.get("folderId")
    folder = folders.get(folder_id) if isinstance(folder_id, str) else None
    if folder:
        meta["folder"] = folder
    conv_id = conv.get("id")
    return ImportedConversation(
        source_format=FORMAT,
        source_id=conv_id if isinstance(conv_id, str) and conv_id else content_hash(conv),
        title=as_str(conv.get("name")), created_at=None, mode="dialogue", messages=messages,
        current_source_id=messages[-1].source_id if messages else None,
        system=as_str(conv.get("prompt")), metadata=meta, source_count=len(items),
    )
