"""The Anthropic Messages request builder (`anthropic_request`).

A pure function like the OpenAI builders beside it; the rules it applies:

- every system message, wherever it stands, goes to the top-level `system` field: a
  plain string when there is one system message without a cache flag, else a list of
  text blocks;
- user messages keep their blocks; role `tool` becomes a user message holding its
  `tool_result` blocks; consecutive messages of one role are merged so roles alternate,
  and in a merged user message the tool_result blocks are moved first (the API wants
  them before any other block);
- images go as base64 sources (jpeg, png, gif, webp; other image types as surrogates),
  PDFs as base64 documents, textual documents as plain-text documents titled by their
  name; audio, which the API does not take, goes as a surrogate text (see blocks.py);
- `thinking` blocks are kept on assistant turns only when they carry a `signature`
  (the API rejects unsigned ones); empty text blocks are dropped (the API rejects them),
  and a message left empty is left out;
- `cache_control: {"type": "ephemeral"}` marks the last block of every message whose
  normalized message has `"cache": true`. The API accepts at most
  `MAX_CACHE_BREAKPOINTS`; when more are flagged the earliest are unmarked, since a later
  breakpoint caches the whole prefix before it anyway;
- the first message must be a user message. When the thread starts with an assistant
  turn, a user message holding `lead_in` (default `LEAD_IN`) is put first, visibly and
  in the stored request; pass `lead_in=None` to get InvalidInput instead;
- `max_tokens` is the argument, else `options["max_tokens"]`, else `DEFAULT_MAX_TOKENS`;
  `stop` becomes `stop_sequences`; the options in `ANTHROPIC_OPTIONS` are copied and a
  dict in `options["anthropic"]` is merged last. `temperature`, `top_p` and `top_k` are
  not sent: the Messages API, as the anthropic SDK 2.x describes it, takes no sampling
  parameters (a server that does can get them through `options["anthropic"]`). When
  that dict carries `messages` (the gateway as a recording proxy: the client's own
  body), nothing is built from the context: the body is those fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InvalidInput
from .blocks import (
    BlobReader,
    Block,
    b64,
    document_text,
    neutral_tool_choice,
    neutral_tools,
    pick,
    read_blob,
    surrogate,
)

DEFAULT_MAX_TOKENS = 4096
LEAD_IN = "[The conversation opens with the assistant's message below.]"
MAX_CACHE_BREAKPOINTS = 4
ANTHROPIC_OPTIONS = ("thinking", "metadata", "service_tier")
IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
EPHEMERAL = {"type": "ephemeral"}


def _text(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}] if text else []


def _image(block: Block, blob_reader: BlobReader | None, where: str) -> list[dict[str, Any]]:
    mime = block["mime_type"].lower()
    if mime not in IMAGE_TYPES:
        return _text(surrogate(block))
    data = b64(read_blob(block, blob_reader, where))
    return [{"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}}]


def _document(block: Block, blob_reader: BlobReader | None, where: str) -> list[dict[str, Any]]:
    if block["mime_type"].lower() == "application/pdf" and "text" not in block:
        data = b64(read_blob(block, blob_reader, where))
        source: dict[str, Any] = {"type": "base64", "media_type": "application/pdf", "data": data}
    else:
        text = document_text(block, blob_reader, where)
        if text is None:
            return _text(surrogate(block))
        source = {"type": "text", "media_type": "text/plain", "data": text}
    out: dict[str, Any] = {"type": "document", "source": source}
    if block.get("name"):
        out["title"] = block["name"]
    return [out]


def _tool_result(block: Block, blob_reader: BlobReader | None, where: str) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    for i, part in enumerate(block["content"]):
        content.extend(_part(part, "user", blob_reader, f"{where}.content[{i}]"))
    out: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": block["tool_use_id"],
        "content": content,
    }
    if block.get("is_error"):
        out["is_error"] = True
    return [out]


def _part(
    block: Block, role: str, blob_reader: BlobReader | None, where: str
) -> list[dict[str, Any]]:
    """The Anthropic blocks (zero or one) for one normalized block in a `role` message."""
    kind = block["type"]
    if kind == "text":
        return _text(block["text"])
    if kind == "image":
        return _image(block, blob_reader, where)
    if kind == "document":
        return _document(block, blob_reader, where)
    if kind == "audio":
        return _text(surrogate(block))
    if kind == "thinking":
        keep = role == "assistant" and block.get("signature")
        return (
            [{"type": "thinking", "thinking": block["thinking"], "signature": block["signature"]}]
            if keep
            else []
        )
    if kind == "tool_use" and role == "assistant":
        return [
            {"type": "tool_use", "id": block["id"], "name": block["name"], "input": block["input"]}
        ]
    if kind == "tool_result" and role == "user":
        return _tool_result(block, blob_reader, where)
    raise InvalidInput(where, f"a {kind} block cannot stand in a {role} message")


def _message(
    message: Mapping[str, Any], blob_reader: BlobReader | None, where: str
) -> dict[str, Any] | None:
    role = "assistant" if message["role"] == "assistant" else "user"
    if message["role"] not in ("user", "assistant", "tool"):
        raise InvalidInput(where, f"unknown role {message['role']!r}")
    content: list[dict[str, Any]] = []
    for i, block in enumerate(message["content"]):
        content.extend(_part(block, role, blob_reader, f"{where}.content[{i}]"))
    if not content:
        return None
    if message.get("cache"):
        content[-1]["cache_control"] = dict(EPHEMERAL)
    return {"role": role, "content": content}


def _merge(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Merge runs of one role; tool_result blocks first in each user message."""
    merged: list[dict[str, Any]] = []
    for message in messages:
        if merged and merged[-1]["role"] == message["role"]:
            merged[-1]["content"].extend(message["content"])
        else:
            merged.append({"role": message["role"], "content": list(message["content"])})
    for message in merged:
        if message["role"] == "user":
            message["content"].sort(key=lambda b: b["type"] != "tool_result")
    return merged


def _system(
    messages: list[Mapping[str, Any]], blob_reader: BlobReader | None
) -> str | list[dict[str, Any]] | None:
    blocks: list[dict[str, Any]] = []
    for i, message in enumerate(messages):
        where = f"system[{i}].content"
        text = "".join(b["text"] for b in _system_parts(message, blob_reader, where))
        if not text:
            continue
        block: dict[str, Any] = {"type": "text", "text": text}
        if message.get("cache"):
            block["cache_control"] = dict(EPHEMERAL)
        blocks.append(block)
    if not blocks:
        return None
    if len(blocks) == 1 and "cache_control" not in blocks[0]:
        return str(blocks[0]["text"])
    return blocks


def _system_parts(
    message: Mapping[str, Any], blob_reader: BlobReader | None, where: str
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, block in enumerate(message["content"]):
        if block["type"] == "text":
            out.extend(_text(block["text"]))
        elif block["type"] == "document":
            text = document_text(block, blob_reader, f"{where}[{i}]")
            out.extend(_text(text if text is not None else surrogate(block)))
        elif block["type"] in ("image", "audio"):
            out.extend(_text(surrogate(block)))
    return out


def _limit_breakpoints(system: Any, messages: list[dict[str, Any]]) -> None:
    """Unmark the earliest cache breakpoints beyond the API's limit."""
    marked = [b for b in (system if isinstance(system, list) else []) if "cache_control" in b]
    for message in messages:
        marked.extend(b for b in message["content"] if "cache_control" in b)
    for block in marked[: max(0, len(marked) - MAX_CACHE_BREAKPOINTS)]:
        del block["cache_control"]


def _options(options: Mapping[str, Any]) -> dict[str, Any]:
    out = pick(options, ANTHROPIC_OPTIONS)
    stop = options.get("stop")
    if stop:
        out["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    tools = neutral_tools(options)
    if tools:
        out["tools"] = tools
    if options.get("tool_choice") is not None:
        choice = neutral_tool_choice(options["tool_choice"])
        out["tool_choice"] = (
            {"type": "tool", "name": choice["name"]}
            if isinstance(choice, dict)
            else {"type": {"required": "any"}.get(choice, choice)}
        )
    extra = options.get("anthropic") or {}
    if not isinstance(extra, Mapping):
        raise InvalidInput("options.anthropic", "must be a table of provider-specific fields")
    out.update(extra)
    return out


def forwarded(options: Mapping[str, Any]) -> bool:
    """The options carry a client's own Messages body (the gateway as a recording proxy)."""
    extra = options.get("anthropic")
    return isinstance(extra, Mapping) and isinstance(extra.get("messages"), list)


def anthropic_request(
    ctx: Mapping[str, Any],
    *,
    model: str | None = None,
    max_tokens: int | None = None,
    blob_reader: BlobReader | None = None,
    lead_in: str | None = LEAD_IN,
) -> dict[str, Any]:
    """An Anthropic Messages request body for the context (see module docstring)."""
    options = ctx.get("options") or {}
    chosen = model or options.get("model")
    if not isinstance(chosen, str) or not chosen:
        raise InvalidInput("options.model", "no model: pass model= or set options.model")
    from ..tool_ids import link_results

    if forwarded(options):  # the caller's own messages replace the built ones (a proxy)
        given: dict[str, Any] = {"model": chosen, "max_tokens": int(
            max_tokens or options.get("max_tokens") or DEFAULT_MAX_TOKENS)}
        given.update(_options(options))
        return given
    system_msgs = [m for m in ctx["messages"] if m["role"] == "system"]
    turns = [
        built
        for i, m in enumerate(link_results(ctx["messages"]))
        if m["role"] != "system"
        if (built := _message(m, blob_reader, f"messages[{i}]")) is not None
    ]
    messages = _merge(turns)
    if not messages:
        raise InvalidInput("messages", "the context holds no user or assistant message to send")
    if messages[0]["role"] == "assistant":
        if lead_in is None:
            raise InvalidInput(
                "messages",
                "Anthropic needs a user message first; the thread opens with the assistant",
            )
        messages.insert(0, {"role": "user", "content": [{"type": "text", "text": lead_in}]})
    system = _system(system_msgs, blob_reader)
    _limit_breakpoints(system, messages)
    limit = max_tokens or options.get("max_tokens") or DEFAULT_MAX_TOKENS
    body: dict[str, Any] = {"model": chosen, "max_tokens": int(limit), "messages": messages}
    if system is not None:
        body["system"] = system
    body.update(_options(options))
    return body
