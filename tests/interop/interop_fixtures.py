"""Builders for each export format's documented structure, and tree measurements.

The tests build their own small exports here; the real samples other tools wrote are
kept in tests/fixtures/interop/ (sources and licences in SOURCES.md there).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from loomdb.interop import ImportedConversation, ParseError, parse_file
from loomdb.interop.model import ImportedMessage

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "interop"


def sample(name: str) -> Path:
    path = SAMPLES / name
    assert path.is_file(), f"missing real sample {path}"
    return path


def load_sample(name: str) -> Any:
    return json.loads(sample(name).read_text(encoding="utf-8"))


# ---------------------------------------------------------------- files


def write_json(tmp_path: Path, name: str, value: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def write_jsonl(tmp_path: Path, name: str, rows: list[Any]) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def parse_all(path: Path, fmt: str = "auto") -> tuple[list[ImportedConversation], list[ParseError]]:
    convs: list[ImportedConversation] = []
    errors: list[ParseError] = []
    for item in parse_file(path, fmt):
        (errors if isinstance(item, ParseError) else convs).append(item)  # type: ignore[arg-type]
    return convs, errors


def only(path: Path, fmt: str = "auto") -> ImportedConversation:
    convs, errors = parse_all(path, fmt)
    assert not errors, errors
    assert len(convs) == 1, convs
    return convs[0]


# ---------------------------------------------------------------- tree shape


def children_of(conv: ImportedConversation) -> dict[str | None, list[str]]:
    kids: dict[str | None, list[str]] = {}
    for m in conv.messages:
        kids.setdefault(m.parent_source_id, []).append(m.source_id)
    return kids


def roots(conv: ImportedConversation) -> list[str]:
    return [m.source_id for m in conv.messages if m.parent_source_id is None]


def branch_points(conv: ImportedConversation) -> int:
    counts = Counter(m.parent_source_id for m in conv.messages if m.parent_source_id is not None)
    return sum(1 for n in counts.values() if n >= 2)


def active_branch(conv: ImportedConversation) -> list[str]:
    """Ids from the root down to `current_source_id`."""
    by_id = {m.source_id: m for m in conv.messages}
    path: list[str] = []
    node = conv.current_source_id
    while node is not None:
        path.append(node)
        node = by_id[node].parent_source_id
    return path[::-1]


def parents_first(conv: ImportedConversation) -> bool:
    seen: set[str] = set()
    for m in conv.messages:
        if m.parent_source_id is not None and m.parent_source_id not in seen:
            return False
        seen.add(m.source_id)
    return True


def by_id(conv: ImportedConversation) -> dict[str, ImportedMessage]:
    return {m.source_id: m for m in conv.messages}


def block_types(message: ImportedMessage) -> list[str]:
    return [b["type"] for b in message.content]


def text_of(message: ImportedMessage) -> str:
    return "".join(b.get("text", "") for b in message.content if b["type"] == "text")


# ---------------------------------------------------------------- ChatGPT


def cg_message(
    mid: str,
    role: str,
    parts: list[Any] | None = None,
    *,
    content: dict[str, Any] | None = None,
    create_time: float | None = 1_700_000_000.0,
    metadata: dict[str, Any] | None = None,
    name: str | None = None,
    recipient: str = "all",
) -> dict[str, Any]:
    return {
        "id": mid,
        "author": {"role": role, "name": name, "metadata": {}},
        "create_time": create_time,
        "update_time": None,
        "content": content
        or {"content_type": "text", "parts": parts if parts is not None else [""]},
        "status": "finished_successfully",
        "end_turn": True,
        "weight": 1.0,
        "metadata": metadata or {},
        "recipient": recipient,
    }


def cg_conversation(
    nodes: list[tuple[str, str | None, dict[str, Any] | None]],
    *,
    conv_id: str = "conv-1",
    current_node: str | None = None,
    title: str = "A chat",
    create_time: float | None = 1_700_000_000.0,
) -> dict[str, Any]:
    """A conversation whose mapping holds `(id, parent, message or None)` nodes."""
    mapping: dict[str, Any] = {}
    for node_id, parent, message in nodes:
        mapping[node_id] = {"id": node_id, "message": message, "parent": parent, "children": []}
    for node_id, parent, _ in nodes:
        if parent in mapping:
            mapping[parent]["children"].append(node_id)
    conv: dict[str, Any] = {
        "title": title,
        "create_time": create_time,
        "update_time": create_time,
        "mapping": mapping,
        "moderation_results": [],
        "conversation_id": conv_id,
        "id": conv_id,
    }
    if current_node is not None:
        conv["current_node"] = current_node
    return conv


def cg_branched(conv_id: str = "conv-1") -> dict[str, Any]:
    """null root -> hidden system -> user u1 -> {a1 (-> u2 -> a2), a1b}; current a2."""
    t = 1_700_000_000.0
    return cg_conversation(
        [
            ("root", None, None),
            (
                "sys",
                "root",
                cg_message(
                    "sys",
                    "system",
                    [""],
                    create_time=None,
                    metadata={"is_visually_hidden_from_conversation": True},
                ),
            ),
            ("u1", "sys", cg_message("u1", "user", ["hello"], create_time=t + 1)),
            (
                "a1",
                "u1",
                cg_message(
                    "a1", "assistant", ["hi!"], create_time=t + 2, metadata={"model_slug": "gpt-4o"}
                ),
            ),
            (
                "a1b",
                "u1",
                cg_message(
                    "a1b",
                    "assistant",
                    ["hey"],
                    create_time=t + 9,
                    metadata={"model_slug": "gpt-4o"},
                ),
            ),
            ("u2", "a1", cg_message("u2", "user", ["more"], create_time=t + 3)),
            (
                "a2",
                "u2",
                cg_message(
                    "a2",
                    "assistant",
                    ["sure"],
                    create_time=t + 4,
                    metadata={"model_slug": "gpt-4o"},
                ),
            ),
        ],
        conv_id=conv_id,
        current_node="a2",
    )


# ---------------------------------------------------------------- Claude


def claude_message(uuid: str, sender: str, text: str = "", **extra: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {
        "uuid": uuid,
        "text": text,
        "content": [{"type": "text", "text": text, "citations": []}] if text else [],
        "sender": sender,
        "created_at": "2024-05-01T10:00:00.000000Z",
        "updated_at": "2024-05-01T10:00:00.000000Z",
        "attachments": [],
        "files": [],
    }
    msg.update(extra)
    return msg


def claude_conversation(
    uuid: str, messages: list[dict[str, Any]], name: str = "Chat"
) -> dict[str, Any]:
    return {
        "uuid": uuid,
        "name": name,
        "created_at": "2024-05-01T09:59:00.000000Z",
        "updated_at": "2024-05-01T10:05:00.000000Z",
        "account": {"uuid": "acct-1"},
        "chat_messages": messages,
    }


# ---------------------------------------------------------------- Open WebUI


def owui_message(
    mid: str, parent: str | None, role: str, content: str, ts: int = 1_744_577_557, **extra: Any
) -> dict[str, Any]:
    return {
        "id": mid,
        "parentId": parent,
        "childrenIds": [],
        "role": role,
        "content": content,
        "timestamp": ts,
        **extra,
    }


def owui_chat(
    messages: list[dict[str, Any]],
    current: str | None,
    chat_id: str = "chat-1",
    wrapped: bool = True,
) -> dict[str, Any]:
    table = {m["id"]: dict(m) for m in messages}
    for m in messages:
        if m["parentId"] in table:
            table[m["parentId"]]["childrenIds"].append(m["id"])
    chat = {
        "id": chat_id,
        "title": "WebUI chat",
        "models": ["llama3"],
        "history": {"messages": table, "currentId": current},
        "messages": list(table.values()),
        "timestamp": 1_744_577_557_127,
    }
    if not wrapped:
        return chat
    return {
        "id": chat_id,
        "user_id": "u",
        "title": "WebUI chat",
        "chat": chat,
        "created_at": 1_744_577_557,
        "updated_at": 1_744_577_600,
    }


# ---------------------------------------------------------------- LibreChat


NO_PARENT = "00000000-0000-0000-0000-000000000000"


def lc_message(mid: str, parent: str, by_user: bool, text: str, **extra: Any) -> dict[str, Any]:
    return {
        "messageId": mid,
        "parentMessageId": parent,
        "conversationId": "lc-conv",
        "sender": "User" if by_user else "GPT-4",
        "text": text,
        "isCreatedByUser": by_user,
        "model": None if by_user else "gpt-4o",
        "createdAt": extra.pop("createdAt", "2024-05-01T16:35:11.530Z"),
        **extra,
    }


def lc_export(messages: list[dict[str, Any]], conv_id: str = "lc-conv") -> dict[str, Any]:
    return {
        "conversationId": conv_id,
        "endpoint": "openAI",
        "title": "LibreChat chat",
        "exportAt": "13:18:04 GMT-0400",
        "branches": True,
        "recursive": False,
        "options": {"model": "gpt-4o", "promptPrefix": "Be brief."},
        "messages": messages,
    }


# ---------------------------------------------------------------- loom, oasst, openai, sharegpt


def loom_node(
    node_id: str | None, text: str, children: Sequence[dict[str, Any]] = (), **extra: Any
) -> dict[str, Any]:
    node: dict[str, Any] = {"text": text, "children": list(children), **extra}
    if node_id is not None:
        node["id"] = node_id
    return node


def oasst_node(
    mid: str, role: str, text: str, replies: Sequence[dict[str, Any]] = (), **extra: Any
) -> dict[str, Any]:
    return {
        "message_id": mid,
        "text": text,
        "role": role,
        "lang": "en",
        "replies": list(replies),
        **extra,
    }


def oasst_tree(prompt: dict[str, Any]) -> dict[str, Any]:
    return {
        "message_tree_id": prompt["message_id"],
        "tree_state": "ready_for_export",
        "prompt": prompt,
    }


def oasst_flat(tree: dict[str, Any]) -> list[dict[str, Any]]:
    """The flat message export of a tree: one row per message with parent_id."""
    rows: list[dict[str, Any]] = []
    stack = [(tree["prompt"], None)]
    while stack:
        node, parent = stack.pop()
        row = {k: v for k, v in node.items() if k != "replies"}
        rows.append({**row, "parent_id": parent, "message_tree_id": tree["message_tree_id"]})
        stack.extend((r, node["message_id"]) for r in reversed(node["replies"]))
    return rows
