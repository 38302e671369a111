"""OpenAI wire shapes <-> loomdb messages: request messages in, answers out.

A request message becomes `Message(role, blocks, key)`: the blocks a node stores, and
`key`, the bytes its path digest is built from (see `paths.py`). The key is a function
of (role, blocks as a client re-sends them) only, so a message matches whether it
comes as a string or a list of text parts, with or without the null fields SDKs add:

- text, or text-only parts, is one text block (parts joined): what `requests.py`
  sends for text-only content, so a stored node re-sent by any client keys the same;
- `tool_calls` (and the legacy `function_call`) become tool_use blocks, a `tool` (or
  `function`) message one tool_result block;
- `image_url` data URLs become image blocks whose bytes go to the blob store
  (`Message.blobs`); remote URLs are refused (the gateway stores content, not links);
- reasoning fields are not kept: clients do not re-send them consistently, so a
  message's key never depends on them (an answer's thinking is kept in its node, and
  left out of its key).

The key of a message holding one text block is the role's letter, the text's length,
a colon and the text; any other content keys as the role, `#`, the length and the
canonical JSON of its blocks. Keys are self-delimiting, so a path's digest is the hash
of its keys concatenated. No canonical JSON and no hash is computed per text message on
the hot path: a history of plain messages is converted by list comprehensions.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from ..content import canonical, digest
from ..errors import InvalidInput

ROLES = {
    "system": "system", "developer": "system", "user": "user", "assistant": "assistant",
    "tool": "tool", "function": "tool",
}
_LETTER = {"system": "s", "user": "u", "assistant": "a", "tool": "t"}
_SIMPLE = {"user", "assistant", "system", "developer"}
#: the fields of a message the fast path takes (anything else: the general path)
_PLAIN = {"role", "content", "name"}
FINISH = {"end_turn": "stop", "max_tokens": "length", "stop_sequence": "stop",
          "tool_use": "tool_calls", "refusal": "content_filter"}
Blocks = list[dict[str, Any]]


@dataclass
class Message:
    """One request message as loomdb stores it, with its path key."""

    role: str
    blocks: Blocks
    key: str
    blobs: dict[str, tuple[bytes, str]] = field(default_factory=dict)


class Messages(Sequence[Message]):
    """A request's messages as parallel lists (roles, keys, and the normalized messages
    a model client takes, blocks inside): a 2,000-message history is converted by a few
    list comprehensions, not 2,000 objects."""

    def __init__(self, roles: list[str], sent: list[dict[str, Any]], keys: list[str],
                 blobs: dict[str, tuple[bytes, str]] | None = None) -> None:
        self.roles, self._sent, self.keys = roles, sent, keys
        self.blobs = blobs or {}

    @classmethod
    def of(cls, items: Sequence[Message]) -> Messages:
        blobs = {k: v for m in items for k, v in m.blobs.items()}
        return cls([m.role for m in items],
                   [{"role": m.role, "content": m.blocks} for m in items],
                   [m.key for m in items], blobs)

    def __len__(self) -> int:
        return len(self.keys)

    @overload
    def __getitem__(self, i: int) -> Message: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Message]: ...

    def __getitem__(self, i: int | slice) -> Message | Sequence[Message]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return Message(self.roles[i], self._sent[i]["content"], self.keys[i])

    def blocks(self, i: int) -> Blocks:
        return self._sent[i]["content"]  # type: ignore[no-any-return]

    def __add__(self, other: Messages) -> Messages:
        return Messages(self.roles + other.roles, self._sent + other._sent,
                        self.keys + other.keys, {**self.blobs, **other.blobs})

    def sent(self) -> list[dict[str, Any]]:
        """The normalized messages a model client takes (a new list; shared dicts)."""
        return list(self._sent)


def key_of(role: str, blocks: Sequence[Mapping[str, Any]]) -> str:
    """The text a message contributes to its path digest (module docstring)."""
    if len(blocks) == 1 and blocks[0].get("type") == "text" and len(blocks[0]) == 2:
        text = str(blocks[0]["text"])
        return f"{_LETTER[role]}{len(text)}:{text}"
    body = canonical(list(blocks)).decode("utf-8")
    return f"{role}#{len(body)}:{body}"


def resent(blocks: Blocks) -> Blocks:
    """The blocks of an answer as a client sends them back (no thinking)."""
    kept = [b for b in blocks if b["type"] != "thinking"]
    return kept or [{"type": "text", "text": ""}]


def messages(raw: Any, where: str = "messages") -> Messages:
    """Request messages -> Messages; bad shapes raise InvalidInput naming the field."""
    if not isinstance(raw, list) or not raw:
        raise InvalidInput(where, "must be a non-empty list of messages")
    plain = _PLAIN
    roles: list[Any] = [m.get("role") if type(m) is dict and type(m.get("content")) is str
             and type(m.get("role")) is str and m.keys() <= plain else None for m in raw]
    if set(roles) <= _SIMPLE:  # the everyday request: roles and strings, nothing else
        if "developer" in roles:
            roles = [ROLES[r] for r in roles]
        texts = [m["content"] for m in raw]
        return Messages(
            roles, [{"role": r, "content": [{"type": "text", "text": t}]}
                    for r, t in zip(roles, texts, strict=True)],
            [f"{_LETTER[r]}{len(t)}:{t}" for r, t in zip(roles, texts, strict=True)])
    return Messages.of([message(m, f"{where}[{i}]") for i, m in enumerate(raw)])


def _utf8(text: str, where: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"{where}.content", "text is not valid Unicode") from None


def message(msg: Any, where: str) -> Message:
    """One message of any accepted shape."""
    if not isinstance(msg, dict):
        raise InvalidInput(where, "a message must be a JSON object")
    given = msg.get("role")
    role = ROLES.get(given) if isinstance(given, str) else None
    if role is None:
        raise InvalidInput(f"{where}.role", f"unknown role {msg.get('role')!r}")
    blobs: dict[str, tuple[bytes, str]] = {}
    if role == "tool":
        blocks = [_tool_result(msg, where)]
    else:
        blocks = _content(msg.get("content"), f"{where}.content", blobs) + _calls(msg, where)
    if not blocks:
        blocks = [{"type": "text", "text": ""}]
    return Message(role, blocks, key_of(role, blocks), blobs)


def _content(content: Any, where: str, blobs: dict[str, tuple[bytes, str]]) -> Blocks:
    if content is None or content == "":
        return []
    if isinstance(content, str):
        _utf8(content, where)
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise InvalidInput(where, "must be a string or a list of content parts")
    out: Blocks = []
    for i, part in enumerate(content):
        block = _part(part, f"{where}[{i}]", blobs)
        if block["type"] == "text" and out and out[-1]["type"] == "text":
            out[-1] = {"type": "text", "text": out[-1]["text"] + block["text"]}
        else:
            out.append(block)
    return out


def _part(part: Any, where: str, blobs: dict[str, tuple[bytes, str]]) -> dict[str, Any]:
    if not isinstance(part, dict):
        raise InvalidInput(where, "a content part must be a JSON object")
    kind = part.get("type")
    if kind in ("text", "input_text", "output_text") and isinstance(part.get("text"), str):
        _utf8(part["text"], where)
        return {"type": "text", "text": part["text"]}
    if kind == "refusal" and isinstance(part.get("refusal"), str):
        return {"type": "text", "text": part["refusal"]}
    if kind in ("image_url", "input_image"):
        spec = part.get("image_url")
        url = spec.get("url") if isinstance(spec, dict) else spec
        return _image(url, where, blobs)
    raise InvalidInput(where, f"unsupported content part type {kind!r}")


def _image(url: Any, where: str, blobs: dict[str, tuple[bytes, str]]) -> dict[str, Any]:
    if not isinstance(url, str) or not url.startswith("data:") or "," not in url:
        raise InvalidInput(where, "images must be data: URLs (the gateway stores the bytes)")
    head, payload = url[5:].split(",", 1)
    mime = head.split(";")[0] or "image/png"
    try:
        data = base64.b64decode(payload, validate=True) if ";base64" in head else payload.encode()
    except (binascii.Error, ValueError):
        raise InvalidInput(where, "the data URL is not valid base64") from None
    ref = digest(data)
    blobs[ref] = (data, mime)
    return {"type": "image", "ref": ref, "mime_type": mime}


def _calls(msg: dict[str, Any], where: str) -> Blocks:
    calls = msg.get("tool_calls") or []
    if not isinstance(calls, list):
        raise InvalidInput(f"{where}.tool_calls", "must be a list")
    if isinstance(msg.get("function_call"), dict):
        calls = [*calls, {"id": "function_call", "function": msg["function_call"]}]
    out: Blocks = []
    for j, call in enumerate(calls):
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise InvalidInput(f"{where}.tool_calls[{j}]", "needs function.name")
        out.append({"type": "tool_use", "id": str(call.get("id") or f"call_{j}"),
                    "name": fn["name"], "input": _arguments(fn.get("arguments"),
                                                             f"{where}.tool_calls[{j}]")})
    return out


def _arguments(raw: Any, where: str) -> dict[str, Any]:
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        raise InvalidInput(f"{where}.function.arguments", "is not valid JSON") from None
    return value if isinstance(value, dict) else {"value": value}


def _tool_result(msg: dict[str, Any], where: str) -> dict[str, Any]:
    call_id = msg.get("tool_call_id") or msg.get("name")
    if not isinstance(call_id, str) or not call_id:
        raise InvalidInput(f"{where}.tool_call_id", "a tool message needs tool_call_id")
    parts = _content(msg.get("content"), f"{where}.content", {})
    text = "".join(p["text"] for p in parts if p["type"] == "text")
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id,
                             "content": [{"type": "text", "text": text}]}
    if isinstance(msg.get("name"), str) and msg.get("tool_call_id"):
        block["name"] = msg["name"]
    return block


# == answers out ====================================================================
def assistant_message(blocks: Blocks) -> dict[str, Any]:
    """An answer's blocks as an OpenAI assistant message."""
    text = "".join(b["text"] for b in blocks if b["type"] == "text")
    calls = [tool_call(b) for b in blocks if b["type"] == "tool_use"]
    out: dict[str, Any] = {"role": "assistant", "content": text if text or not calls else None}
    if calls:
        out["tool_calls"] = calls
    thinking = "".join(b["thinking"] for b in blocks if b["type"] == "thinking")
    if thinking:
        out["reasoning_content"] = thinking
    return out


def tool_call(block: Mapping[str, Any], index: int | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {
        "id": block["id"], "type": "function",
        "function": {"name": block["name"],
                     "arguments": json.dumps(block["input"], ensure_ascii=False)},
    }
    if index is not None:
        call["index"] = index
    return call


def finish_reason(stop_reason: str | None) -> str:
    return FINISH.get(stop_reason or "end_turn", stop_reason or "stop")


def usage(usages: Sequence[Mapping[str, int] | None]) -> dict[str, int]:
    """OpenAI usage over all choices (the prompt counted once)."""
    prompt = max([(u or {}).get("input_tokens", 0) for u in usages] or [0])
    completion = sum((u or {}).get("output_tokens", 0) for u in usages)
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}
