"""LangChain messages as loomdb nodes, and back, exactly.

A message becomes a node any loomdb tool reads: its role (`user`, `assistant`, `system`,
`tool`), its text as text blocks, an AI message's tool calls as `tool_use` blocks, a
tool message as a `tool_result` block answering its call. What the blocks do not carry
(the message's id, `additional_kwargs`, `response_metadata`, `usage_metadata`, a name;
fields left at their defaults are not written) is the message's `fields`, kept by the
area beside the node (`lg_messages`, msgpack; the tree's lineage names the thread):

    {"type": "ai", "id": ..., ...the rest}

`encode`
checks that `decode` gives back a message equal to the one it was given (its class
too); any message it cannot so carry (a content list with other parts, values msgpack
does not keep as they are, a subclass) is kept whole as the checkpoint serializer
writes it (`{"$serde": [type, bytes]}`), and its text still goes to the blocks, so
nothing is ever changed on the way back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ormsgpack
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

FORMAT = "langgraph"
#: message type -> (class, node role)
KINDS: dict[str, tuple[type[BaseMessage], str]] = {
    "human": (HumanMessage, "user"),
    "ai": (AIMessage, "assistant"),
    "system": (SystemMessage, "system"),
    "tool": (ToolMessage, "tool"),
    "chat": (ChatMessage, "user"),
    "function": (FunctionMessage, "tool"),
}
_CHAT_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant",
               "system": "system", "tool": "tool"}
_DEFAULTS: dict[type[BaseMessage], dict[str, Any]] = {}


@dataclass(frozen=True)
class Encoded:
    """What a node of the message holds."""

    role: str
    blocks: list[dict[str, Any]]
    fields: bytes  # msgpack: kept beside the node
    source: str



def is_messages(value: Any) -> bool:
    """A list of LangChain messages (a message channel's value; empty counts)."""
    return isinstance(value, list) and all(isinstance(m, BaseMessage) for m in value)


def encode(m: BaseMessage, serde: SerializerProtocol) -> Encoded:
    """The node of a message (see the module docstring)."""
    kind = KINDS.get(m.type)
    if kind is not None and type(m) is kind[0]:
        try:
            role, blocks, lc = _split(m, kind[1])
            fields = ormsgpack.packb(lc)
            if blocks and decode(role, blocks, fields, serde) == m:
                return Encoded(role, blocks, fields, _source(role))
        except (TypeError, ValueError, ormsgpack.MsgpackEncodeError):
            pass  # not msgpack, or not a shape the blocks carry: kept whole below
    kept = serde.dumps_typed(m)
    role = next((r for cls, r in KINDS.values() if isinstance(m, cls)), "user")
    if isinstance(m, ChatMessage):
        role = _CHAT_ROLES.get(m.role, "user")
    fields = ormsgpack.packb({"$serde": [kept[0], kept[1]]})
    return Encoded(role, _text_blocks(m.content), fields, _source(role))


def decode(role: str, blocks: list[dict[str, Any]], fields: bytes | None,
           serde: SerializerProtocol) -> BaseMessage:
    """The message a node holds with its `fields` (written by `encode`)."""
    lc: dict[str, Any] = ormsgpack.unpackb(fields) if fields else {}
    if "$serde" in lc:
        kept = lc["$serde"]
        value: Any = serde.loads_typed((kept[0], kept[1]))
        if not isinstance(value, BaseMessage):
            raise TypeError(f"a node kept whole holds a {type(value).__name__}, not a message")
        return value
    kind = str(lc.pop("type", ""))
    cls = KINDS[kind][0] if kind in KINDS else {"user": HumanMessage, "assistant": AIMessage,
                                                "system": SystemMessage}.get(role, HumanMessage)
    texts = [b for b in blocks if b.get("type") == "text"]
    for b in blocks:
        if b.get("type") == "tool_result":
            texts = [p for p in b["content"] if p.get("type") == "text"]
            if "tool_use_id" in b:
                lc["tool_call_id"] = b["tool_use_id"]
            if b.get("is_error"):
                lc["status"] = "error"
    if lc.pop("content_list", False):
        lc["content"] = [{"type": "text", "text": b["text"]} for b in texts]
    else:
        lc["content"] = "".join(b["text"] for b in texts)
    calls = [b for b in blocks if b.get("type") == "tool_use"]
    if calls:
        lc["tool_calls"] = [{"name": b["name"], "args": b["input"], "id": b.get("id"),
                             "type": "tool_call"} for b in calls]
    message: BaseMessage = cls(**lc)
    return message


def _split(m: BaseMessage, role: str) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    """(role, blocks, the fields the blocks do not carry)."""
    defaults = _defaults(type(m))
    lc: dict[str, Any] = {"type": m.type}
    for name, value in m.__dict__.items():
        if name in ("content", "type", "tool_calls", "tool_call_id"):
            continue
        if name not in defaults or value != defaults[name]:
            lc[name] = value
    content = m.content
    if isinstance(content, str):
        text = [{"type": "text", "text": content}]
    elif all(isinstance(p, dict) and p.keys() == {"type", "text"} and p["type"] == "text"
             and isinstance(p["text"], str) for p in content):
        text = [{"type": "text", "text": p["text"]} for p in content if isinstance(p, dict)]
        lc["content_list"] = True
    else:
        raise ValueError("a content list with other parts")
    if isinstance(m, AIMessage):
        calls = [{"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["args"]}
                 for c in m.tool_calls]
        if any(not isinstance(c["id"], str) or not isinstance(c["input"], dict) for c in calls):
            raise ValueError("a tool call without an id")
        if calls and content == "":
            text = []  # the calls alone
        return role, text + calls, lc
    if isinstance(m, ToolMessage):
        result: dict[str, Any] = {"type": "tool_result", "content": text,
                                  "tool_use_id": m.tool_call_id}
        if m.status == "error":
            result["is_error"] = True
            lc.pop("status", None)
        return role, [result], lc
    if isinstance(m, ChatMessage):
        role = _CHAT_ROLES.get(m.role, "user")
    return role, text, lc


def _defaults(cls: type[BaseMessage]) -> dict[str, Any]:
    known = _DEFAULTS.get(cls)
    if known is None:
        known = {}
        for name, field in cls.model_fields.items():
            if field.default_factory is not None:
                known[name] = field.default_factory()  # type: ignore[call-arg]
            elif not field.is_required():
                known[name] = field.default
        _DEFAULTS[cls] = known
    return known


def _text_blocks(content: Any) -> list[dict[str, Any]]:
    """The text a message shows, for a message kept whole (search and the page read it)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    parts = [p if isinstance(p, str) else p.get("text") for p in content
             if isinstance(p, str) or (isinstance(p, dict) and isinstance(p.get("text"), str))]
    return [{"type": "text", "text": "\n".join(str(p) for p in parts)}]


def _source(role: str) -> str:
    return "human" if role == "user" else "agent"
