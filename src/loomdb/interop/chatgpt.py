"""ChatGPT `conversations.json` (or its export zip) into the intermediate form.

Each conversation holds a `mapping` of nodes linked by `parent`/`children`; every
branch is kept. Nodes without a message (the usual `message: null` root, or a root
lacking the keys) are not messages: their children move up to the nearest message
ancestor, or become top-level messages. The active branch ends at `current_node`;
when that is missing the newest leaf is chosen and the metadata says so. Content
types are handled in `chatgpt_content`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from ..errors import InvalidInput
from . import tree
from .chatgpt_content import HIDDEN_TYPES, AssetIndex, ContentBuilder
from .model import (
    ROLES,
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
    str_list,
    to_datetime,
)
from .stream import Input, RecordingDict, as_input, duplicate_keys, iter_documents

FORMAT = "chatgpt"
_CONVERSATION_META = (
    "update_time",
    "default_model_slug",
    "gizmo_id",
    "is_archived",
    "conversation_template_id",
)


def parse(source: str | os.PathLike[str] | Input) -> Iterator[ImportedConversation | ParseError]:
    """Every conversation of the file, in file order; a broken one yields a ParseError."""
    inp = as_input(source)
    assets = AssetIndex(inp)
    for index, raw in iter_documents(inp, map_type=RecordingDict):
        conv_id = raw.get("conversation_id") or raw.get("id") if isinstance(raw, dict) else None
        where = source_label(inp.name, index, conv_id)
        yield guarded(where, convert, raw, assets)


def convert(raw: Any, assets: AssetIndex) -> ImportedConversation:
    conv = expect(raw, dict, "conversation", optional=False)
    if "mapping" not in conv or conv["mapping"] is None:
        raise InvalidInput("mapping", "the conversation has no mapping (no messages to import)")
    mapping = expect(conv["mapping"], dict, "mapping", optional=False)
    warnings: list[str] = []
    nodes = _nodes(mapping, warnings)
    attachments = AttachmentSet()
    messages = _messages(nodes, assets, attachments)
    current, meta = _current(conv, nodes, messages)
    meta.update({k: _plain(conv[k]) for k in _CONVERSATION_META if conv.get(k) is not None})
    source_id = conv.get("conversation_id") or conv.get("id")
    return ImportedConversation(
        source_format=FORMAT,
        source_id=source_id if isinstance(source_id, str) and source_id else content_hash(conv),
        title=conv["title"] if isinstance(conv.get("title"), str) else None,
        created_at=to_datetime(conv.get("create_time"), "create_time"),
        mode="dialogue",
        messages=messages,
        current_source_id=current,
        attachments=attachments.to_list(),
        metadata=meta,
        warnings=warnings,
    )


def _nodes(mapping: dict[str, Any], warnings: list[str]) -> dict[str, dict[str, Any]]:
    """The mapping's nodes, checked: unique ids, parents present, no cycles.

    A fragment (a conversation cut out of a larger one: no node without a parent, and
    its top node's parent not in the mapping) is read with that node as the root, and
    a warning says so; a missing parent anywhere else stays an error."""
    dupes = duplicate_keys(mapping)
    if dupes:
        raise InvalidInput("mapping", f"duplicate message ids: {', '.join(map(str, dupes[:5]))}")
    nodes: dict[str, dict[str, Any]] = {}
    for key, node in mapping.items():
        node = expect(node, dict, f"mapping.{key}", optional=False)
        node_id = node.get("id", key)
        if node_id != key:
            raise InvalidInput(f"mapping.{key}", f"the node's id {node_id!r} differs from its key")
        expect(node.get("parent"), str, f"mapping.{key}.parent")
        expect(node.get("children"), list, f"mapping.{key}.children")
        expect(node.get("message"), dict, f"mapping.{key}.message")
        nodes[key] = node
    tops = [k for k, n in nodes.items() if n.get("parent") is not None
            and n["parent"] not in nodes]
    if len(tops) == 1 and all(n.get("parent") is not None for n in nodes.values()):
        top = tops[0]
        warnings.append(f"a fragment: the parent {nodes[top]['parent']!r} of message {top!r} "
                        f"is not in the mapping; {top!r} is imported as the root")
        nodes[top] = {**nodes[top], "parent": None}
    tree.check_links({k: n.get("parent") for k, n in nodes.items()}, "mapping")
    return nodes


def _is_message(node: dict[str, Any]) -> bool:
    message = node.get("message")
    if not message:
        return False
    author = message.get("author")
    return message.get("content") is not None or (
        isinstance(author, dict) and author.get("role") is not None
    )


def _messages(
    nodes: dict[str, dict[str, Any]], assets: AssetIndex, attachments: AttachmentSet
) -> list[ImportedMessage]:
    kept = {k for k, n in nodes.items() if _is_message(n)}
    messages = [
        _message(key, nodes[key]["message"], _message_parent(key, nodes, kept), assets, attachments)
        for key in nodes
        if key in kept
    ]
    children = {k: str_list(n.get("children")) for k, n in nodes.items()}
    roots = [k for k, n in nodes.items() if n.get("parent") is None]
    return tree.order(messages, "mapping", tree.preorder_rank(children, roots))


def _message_parent(key: str, nodes: dict[str, dict[str, Any]], kept: set[str]) -> str | None:
    """The nearest ancestor that is a message (links were checked, so this ends)."""
    parent = nodes[key].get("parent")
    while parent is not None and parent not in kept:
        parent = nodes[parent].get("parent")
    return parent


def _message(
    key: str,
    msg: dict[str, Any],
    parent: str | None,
    assets: AssetIndex,
    attachments: AttachmentSet,
) -> ImportedMessage:
    where = f"mapping.{key}.message"
    author = expect(msg.get("author"), dict, f"{where}.author") or {}
    role = expect(author.get("role"), str, f"{where}.author.role") or "assistant"
    msg_meta = expect(msg.get("metadata"), dict, f"{where}.metadata") or {}
    content = expect(msg.get("content"), dict, f"{where}.content") or {
        "content_type": "text",
        "parts": [],
    }
    blocks, meta = ContentBuilder(assets, attachments, msg_meta).build(content, f"{where}.content")
    meta.update(_message_meta(msg, msg_meta, role))
    model = as_str(msg_meta.get("model_slug"))
    name = as_str(author.get("name"))
    return ImportedMessage(
        source_id=key,
        parent_source_id=parent,
        role=role if role in ROLES else "assistant",
        content=check_blocks(blocks, f"{where}.content"),
        created_at=to_datetime(msg.get("create_time"), f"{where}.create_time"),
        author=name or (model if role == "assistant" else None),
        model=model,
        hidden=bool(msg_meta.get("is_visually_hidden_from_conversation"))
        or meta["content_type"] in HIDDEN_TYPES,
        metadata=meta,
    )


def _message_meta(msg: dict[str, Any], msg_meta: dict[str, Any], role: str) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if role not in ROLES:
        meta["source_role"] = role
    for key in ("status", "end_turn"):
        if msg.get(key) is not None:
            meta[key] = msg[key]
    if msg.get("recipient") not in (None, "all"):
        meta["recipient"] = msg["recipient"]
    if msg.get("weight") not in (None, 1, 1.0):
        meta["weight"] = msg["weight"]
    finish = msg_meta.get("finish_details")
    if isinstance(finish, dict) and isinstance(finish.get("type"), str):
        meta["finish_reason"] = finish["type"]
    if msg_meta.get("is_user_system_message"):
        meta["is_user_system_message"] = True
    return meta


def _current(
    conv: dict[str, Any], nodes: dict[str, dict[str, Any]], messages: list[ImportedMessage]
) -> tuple[str | None, dict[str, Any]]:
    """The active leaf: `current_node` (moved up to a message), else the newest leaf."""
    wanted = conv.get("current_node")
    kept = {m.source_id for m in messages}
    if isinstance(wanted, str) and wanted in nodes:
        node = wanted if wanted in kept else _message_parent(wanted, nodes, kept)
        if node is not None:
            return node, {}
    chosen = tree.newest_leaf(messages)
    if wanted is None:
        why = "missing"
    elif isinstance(wanted, str) and wanted in nodes:
        why = f"{wanted!r} has no message above it"
    else:
        why = f"not in the mapping: {wanted!r}"
    return chosen, {"current_node": why, "current_chosen_by": "newest_leaf"}


def _plain(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool)) else str(value)
