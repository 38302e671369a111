"""socketteer/loom JSON saves into the intermediate form (one tree, buffer mode).

A save is `{root: {text, children: [...]}, selected_node_id, tags, chapters, ...}`:
nodes nest their children and hold a piece of text; reading a path from the root
concatenates the pieces into one document, so the conversation's mode is "buffer".
A node is "assistant" when its `meta.source` says the model wrote it ("AI", or
"mixed" for model text the user edited), otherwise "user". Node tags (and the old
`bookmark: true` flag) are kept; the "bookmark" tag becomes the node's bookmark.
Nodes without an `id` (the root of old saves) get one from their path.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from ..errors import InvalidInput
from . import tree
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
    str_list,
    text_block,
    to_datetime,
)
from .stream import Input, as_input, iter_documents

FORMAT = "loom"
_GENERATED = ("AI", "mixed")
_LOOM_TIME = "%Y-%m-%d-%H.%M.%S"


def parse(source: str | os.PathLike[str] | Input) -> Iterator[ImportedConversation | ParseError]:
    inp = as_input(source)
    title = (
        inp.path.stem if inp.member is None else os.path.splitext(os.path.basename(inp.member))[0]
    )
    for index, raw in iter_documents(inp, deep=True):  # a save nests with its story
        yield guarded(source_label(inp.name, index), convert, raw, title)


def convert(raw: Any, title: str | None = None) -> ImportedConversation:
    save = expect(raw, dict, "save", optional=False)
    root = expect(save.get("root"), dict, "root", optional=False)
    root_id = as_str(root.get("id"))
    conv_id = root_id or _tree_hash(root)
    context = _Context(save)
    messages = tree.order(list(_walk(root, conv_id, context)), "root")
    selected = save.get("selected_node_id")
    known = {m.source_id for m in messages}
    meta: dict[str, Any] = (
        {"hoisted": True} if save.get("masked_head") or root.get("hoisted") else {}
    )
    if selected is not None and selected not in known:
        meta["selected_node_id"] = f"unknown: {selected!r}"
    return ImportedConversation(
        source_format=FORMAT,
        source_id=conv_id,
        title=title,
        created_at=messages[0].created_at if messages else None,
        mode="buffer",
        messages=messages,
        current_source_id=selected if selected in known else None,
        metadata=meta,
    )


class _Context:
    """Save-wide lookups: canonical node ids, chapter titles, stored model responses."""

    def __init__(self, save: dict[str, Any]) -> None:
        self.canonical = set(str_list(save.get("canonical")))
        chapters = as_dict(save.get("chapters"))
        self.chapters = {k: v.get("title") for k, v in chapters.items() if isinstance(v, dict)}
        responses = save.get("model_responses")
        self.responses = as_dict(responses)


def _walk(root: dict[str, Any], conv_id: str, context: _Context) -> Iterator[ImportedMessage]:
    """Every node, depth first, without recursion (saves can be thousands deep)."""
    stack: list[tuple[Any, str, str | None]] = [(root, f"{conv_id}/root", None)]
    while stack:
        node, fallback_id, parent = stack.pop()
        node = expect(node, dict, f"node {fallback_id}", optional=False)
        node_id = node.get("id")
        if node_id is None:
            node_id = fallback_id
        elif not isinstance(node_id, str):
            node_id = str(expect(node_id, int, f"node {fallback_id}.id", optional=False))
        where = f"node {node_id}"
        yield _message(node, node_id, parent, where, context)
        children = expect(node.get("children"), list, f"{where}.children") or []
        stack.extend(
            (c, _child_id(node_id, i), node_id) for i, c in reversed(list(enumerate(children)))
        )


def _child_id(parent_id: str, index: int) -> str:
    """The id of a child the save left without one: its path, hashed when it grows long."""
    derived = f"{parent_id}/{index}"
    if len(derived) <= 160:
        return derived
    return "sha256:" + hashlib.sha256(derived.encode()).hexdigest()[:40]


def _message(
    node: dict[str, Any], node_id: str, parent: str | None, path: str, context: _Context
) -> ImportedMessage:
    text = expect(node.get("text"), str, f"{path}.text") or ""
    meta_in = as_dict(node.get("meta"))
    source = meta_in.get("source")
    tags = str_list(node.get("tags"))
    if node.get("bookmark") is True and "bookmark" not in tags:
        tags.append("bookmark")
    if node_id in context.canonical and "canonical" not in tags:
        tags.append("canonical")
    meta: dict[str, Any] = {}
    if isinstance(source, str):
        meta["source"] = source
    if meta_in.get("modified"):
        meta["edited"] = True
    chapter = context.chapters.get(as_str(node.get("chapter_id")) or "")
    if isinstance(chapter, str):
        meta["chapter"] = chapter
    return ImportedMessage(
        source_id=node_id,
        parent_source_id=parent,
        role="assistant" if source in _GENERATED else "user",
        content=check_blocks([text_block(text)], f"{path}.text"),
        created_at=_time(meta_in.get("creation_timestamp"), f"{path}.meta.creation_timestamp"),
        model=_model(node, context),
        metadata=meta,
        tags=[t for t in tags if t != "bookmark"],
        bookmark=_bookmark_name(node, node_id) if "bookmark" in tags else None,
    )


def _tree_hash(root: dict[str, Any]) -> str:
    """A content hash of the whole tree, computed without recursion (saves nest deeply)."""
    digest = hashlib.sha256()
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        own = {k: v for k, v in node.items() if k != "children"} if isinstance(node, dict) else node
        children = node.get("children") if isinstance(node, dict) else None
        children = children if isinstance(children, list) else []
        digest.update(content_hash(own).encode() + b"/%d;" % len(children))
        stack.extend(reversed(children))
    return "sha256:" + digest.hexdigest()


def _time(value: Any, where: str) -> datetime | None:
    """Loom writes local times as `2023-02-13-20.57.56`; they are taken as UTC."""
    if isinstance(value, str):
        try:
            return datetime.strptime(value, _LOOM_TIME).replace(tzinfo=UTC)
        except ValueError:
            pass
    try:
        return to_datetime(value, where)
    except InvalidInput:
        return None


def _model(node: dict[str, Any], context: _Context) -> str | None:
    generation = as_dict(node.get("generation"))
    model = generation.get("model")
    if isinstance(model, str):
        return model
    response = context.responses.get(as_str(generation.get("id")) or "")
    if isinstance(response, dict):
        inner = as_dict(response.get("response"))
        for value in (response.get("model"), inner.get("model")):
            if isinstance(value, str):
                return value
    return None


def _bookmark_name(node: dict[str, Any], node_id: str) -> str:
    """The node's own name if the save gives one, else a name made from its id."""
    name = node.get("name")
    return name.strip() if isinstance(name, str) and name.strip() else f"loom-{node_id[:12]}"
