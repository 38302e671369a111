"""OpenAssistant (oasst) exports into the intermediate form.

Three shapes are read, all JSONL (or a JSON array):
  * the tree export, one tree per line: `{message_tree_id, prompt: {message_id, text,
    role, rank, replies: [...]}}`; every reply is a sibling alternative;
  * the message-node export, one root message per line with its nested `replies` and
    no wrapper: each line is a tree, read like the tree export;
  * the flat message export, one message per line with `parent_id` and
    `message_tree_id`; lines are grouped by tree (a first pass notes each tree's
    line offsets, so memory stays bounded and the lines need not be sorted).
Roles are `prompter` -> user and `assistant`. `rank` (0 = best) is kept in metadata,
and the active branch follows the best-ranked reply at each step.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from ..errors import InvalidInput
from . import tree
from .model import (
    ImportedConversation,
    ImportedMessage,
    ParseError,
    as_str,
    check_blocks,
    expect,
    guarded,
    source_label,
    text_block,
    to_datetime,
)
from .stream import (
    Input,
    as_input,
    first_char,
    iter_documents,
    iter_lines,
    line_offsets,
    loads,
    read_lines_at,
)

FORMAT = "oasst"
_ROLES = {"prompter": "user", "assistant": "assistant", "user": "user", "system": "system"}
_KEPT = (
    "rank",
    "lang",
    "synthetic",
    "review_count",
    "review_result",
    "emojis",
    "labels",
    "deleted",
    "tree_state",
)


def parse(source: str | os.PathLike[str] | Input) -> Iterator[ImportedConversation | ParseError]:
    inp = as_input(source)
    if first_char(inp.peek(4096)) == "[":
        yield from _parse_array(inp)
        return
    if _is_flat(inp):
        yield from _parse_flat(inp)
        return
    for lineno, raw in iter_lines(inp):
        tree_id = raw.get("message_tree_id") if isinstance(raw, dict) else None
        where = source_label(inp.name, lineno, tree_id, line=True)
        if isinstance(raw, InvalidInput):
            yield ParseError(where, str(raw))
        else:
            yield guarded(where, convert_tree, _as_tree(raw))


def _is_node(raw: Any) -> bool:
    """A root message with its replies nested, not wrapped in a tree record."""
    return isinstance(raw, dict) and "prompt" not in raw and "replies" in raw


def _as_tree(raw: Any) -> Any:
    """A message-node line as the tree record it stands for (others as they are)."""
    if not _is_node(raw):
        return raw
    tree_id = raw.get("message_tree_id") or raw.get("message_id")
    return {"message_tree_id": tree_id, "prompt": raw}


def _is_flat(inp: Input) -> bool:
    for _, raw in iter_lines(inp):
        return (isinstance(raw, dict) and "prompt" not in raw and "message_id" in raw
                and not _is_node(raw))
    return False


def _parse_array(inp: Input) -> Iterator[ImportedConversation | ParseError]:
    """A JSON array (e.g. a dataset saved as JSON): of trees, or of flat messages.

    Flat messages in an array are grouped in memory; the JSONL export avoids that.
    """
    groups: dict[str, list[Any]] = {}
    for index, raw in iter_documents(inp):
        raw = _as_tree(raw)
        if isinstance(raw, dict) and "prompt" in raw:
            tree_id = raw.get("message_tree_id")
            yield guarded(source_label(inp.name, index, tree_id), convert_tree, raw)
        else:
            tree_id = raw.get("message_tree_id") if isinstance(raw, dict) else None
            key = tree_id if isinstance(tree_id, str) else "(no message_tree_id)"
            groups.setdefault(key, []).append(raw)
    for index, (tree_id, rows) in enumerate(groups.items()):
        yield guarded(source_label(inp.name, index, tree_id), _convert_rows, tree_id, rows)


def _convert_rows(tree_id: str, rows: list[Any]) -> ImportedConversation:
    found = []
    for i, row in enumerate(rows):
        msg = expect(row, dict, f"message {i}", optional=False)
        where = f"message {msg.get('message_id')}"
        found.append(_message(msg, where, msg.get("parent_id")))
    conv = _conversation(found, tree_id, {})
    conv.source_count = sum(_count(row) for row in rows)
    return conv


def convert_tree(raw: Any) -> ImportedConversation:
    """One line of the tree export."""
    record = expect(raw, dict, "tree", optional=False)
    prompt = expect(record.get("prompt"), dict, "prompt", optional=False)
    found: list[ImportedMessage] = []
    stack: list[tuple[Any, str, str | None]] = [(prompt, "prompt", None)]
    while stack:
        item, where, parent = stack.pop()
        msg = expect(item, dict, where, optional=False)
        found.append(_message(msg, where, parent))
        replies = expect(msg.get("replies"), list, f"{where}.replies") or []
        stack.extend(
            (r, f"{where}.replies[{i}]", found[-1].source_id)
            for i, r in reversed(list(enumerate(replies)))
        )
    tree_id = record.get("message_tree_id")
    conv = _conversation(found, tree_id if isinstance(tree_id, str) else found[0].source_id, record)
    conv.source_count = _count(prompt)
    return conv


def _count(message: Any) -> int:
    """Messages in a message object and every reply nested in it, counted on their own."""
    total, stack = 0, [message]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            total += 1
            replies = item.get("replies")
            stack.extend(replies if isinstance(replies, list) else [])
    return total


def _parse_flat(inp: Input) -> Iterator[ImportedConversation | ParseError]:
    groups: dict[str, list[int]] = {}
    truncated: InvalidInput | None = None
    for lineno, offset, raw in line_offsets(inp):
        key = _tree_key(raw, lineno, inp)
        if key is None:
            truncated = InvalidInput(
                f"{inp.name} line {lineno} (byte {offset})",
                "the file is truncated: the last line is incomplete JSON",
            )
            continue
        groups.setdefault(key, []).append(offset)
    for index, (tree_id, offsets) in enumerate(groups.items()):
        yield guarded(source_label(inp.name, index, tree_id), _convert_flat, inp, tree_id, offsets)
    if truncated is not None:
        raise truncated


def _tree_key(raw: bytes, lineno: int, inp: Input) -> str | None:
    """The line's tree id; None for an incomplete last line (a truncated file)."""
    try:
        record = loads(raw, inp.limits)
    except ValueError:
        return None if not raw.endswith(b"\n") else f"(line {lineno}: not JSON)"
    tree_id = record.get("message_tree_id") if isinstance(record, dict) else None
    return tree_id if isinstance(tree_id, str) else "(no message_tree_id)"


def _convert_flat(inp: Input, tree_id: str, offsets: list[int]) -> ImportedConversation:
    found: list[ImportedMessage] = []
    held = 0
    for offset, line in zip(offsets, read_lines_at(inp, offsets), strict=True):
        where = f"byte {offset}"
        try:
            msg = loads(line, inp.limits, where)
        except ValueError as exc:
            raise InvalidInput(where, f"not JSON: {exc}") from None
        msg = expect(msg, dict, where, optional=False)
        found.append(
            _message(msg, f"message {msg.get('message_id')} ({where})", msg.get("parent_id"))
        )
        held += _count(msg)
    conv = _conversation(found, tree_id, {})
    conv.source_count = held
    return conv


def _conversation(
    found: list[ImportedMessage], tree_id: str, record: dict[str, Any]
) -> ImportedConversation:
    messages = tree.order(found, "messages", {m.source_id: _rank_key(m) for m in found})
    meta = {k: record[k] for k in ("tree_state",) if isinstance(record.get(k), str)}
    return ImportedConversation(
        source_format=FORMAT,
        source_id=tree_id,
        title=None,
        created_at=messages[0].created_at if messages else None,
        mode="dialogue",
        messages=messages,
        current_source_id=_best_leaf(messages),
        metadata={**meta, "current_chosen_by": "best_rank"},
    )


def _message(msg: dict[str, Any], where: str, parent: Any) -> ImportedMessage:
    mid = expect(msg.get("message_id"), str, f"{where}.message_id", optional=False)
    role = expect(msg.get("role"), str, f"{where}.role", optional=False)
    if role not in _ROLES:
        raise InvalidInput(
            f"{where}.role", f"unknown role {role!r} (expected prompter or assistant)"
        )
    text = expect(msg.get("text"), str, f"{where}.text") or ""
    model = as_str(msg.get("model_name"))
    return ImportedMessage(
        source_id=mid,
        parent_source_id=expect(parent, str, f"{where}.parent_id"),
        role=_ROLES[role],
        content=check_blocks([text_block(text)], f"{where}.text"),
        created_at=to_datetime(msg.get("created_date"), f"{where}.created_date"),
        author=as_str(msg.get("user_id")),
        model=model,
        hidden=msg.get("deleted") is True,
        metadata={k: msg[k] for k in _KEPT if msg.get(k) is not None},
    )


def _rank_key(message: ImportedMessage) -> int:
    rank = message.metadata.get("rank")
    return rank if isinstance(rank, int) and not isinstance(rank, bool) else 1_000_000


def _best_leaf(messages: list[ImportedMessage]) -> str | None:
    """Follow the best-ranked reply (lowest rank, then source order) from the first root."""
    kids: dict[str | None, list[ImportedMessage]] = {}
    for m in messages:
        kids.setdefault(m.parent_source_id, []).append(m)
    node = kids.get(None, [None])[0]
    while node is not None and kids.get(node.source_id):
        node = kids[node.source_id][0]  # `tree.order` already sorted siblings by rank
    return node.source_id if node else None
