"""Request builders for OpenAI-compatible APIs, and the plain-text prompt for base models.

Pure functions from a normalized context (`{"messages": [...], "options": {...}}`) to the
exact JSON body a provider receives; the only I/O is the caller's `blob_reader`. The
same body is stored beside each completion (`Completion.provider_request`), so what was
sent is always known.

OpenAI Chat Completions mapping (the rules a reader of a stored request needs):

- system messages -> `{"role": "system"}` with their text (media as surrogates);
- user messages -> text parts, images as `image_url` data URLs, wav/mp3 audio as
  `input_audio`, documents as text parts (their `text`, or the decoded bytes of a
  textual mime type) or else `file` parts holding a base64 data URL;
- assistant messages -> their text as a string, `tool_use` blocks as `tool_calls`
  (arguments JSON-encoded); `thinking` blocks are dropped (OpenAI accepts none), and
  media, which assistant messages cannot hold, become surrogates; a message left with
  neither text nor tool calls is left out;
- each `tool_result` block -> one `{"role": "tool", "tool_call_id"}` message with its
  text (prefixed `[error] ` when `is_error`); tool messages take only text, so images and
  binary documents a tool returned follow in one user message that names the call;
- content made only of text parts is sent as one string (the parts concatenated);
- `cache` flags are not sent: OpenAI caches repeated prompt prefixes by itself;
- `model` is the argument, else `options["model"]`; the options listed in
  `OPENAI_CHAT_OPTIONS` are copied, `tools`/`tool_choice` are converted, and a dict in
  `options["openai"]` is merged last for provider-specific fields. Other options are
  loomdb's own (e.g. `provider_ptr`) and are not sent. `n` is never sent: clients make
  one request per alternative.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..content import plain_text
from ..errors import InvalidInput
from .blocks import (
    BlobReader,
    Block,
    b64,
    data_url,
    document_text,
    neutral_tool_choice,
    neutral_tools,
    pick,
    read_blob,
    surrogate,
)

OPENAI_CHAT_OPTIONS = (
    "temperature",
    "top_p",
    "max_tokens",
    "max_completion_tokens",
    "stop",
    "seed",
    "frequency_penalty",
    "presence_penalty",
    "response_format",
    "reasoning_effort",
    "logprobs",
    "top_logprobs",
    "logit_bias",
    "parallel_tool_calls",
    "user",
    "service_tier",
)
OPENAI_COMPLETION_OPTIONS = (
    "temperature",
    "top_p",
    "max_tokens",
    "stop",
    "seed",
    "frequency_penalty",
    "presence_penalty",
    "logprobs",
    "logit_bias",
    "suffix",
    "user",
)
#: mime types OpenAI's `input_audio` accepts, with the format name it wants
OPENAI_AUDIO_FORMATS = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}


def _model(model: str | None, options: Mapping[str, Any]) -> str:
    chosen = model or options.get("model")
    if not isinstance(chosen, str) or not chosen:
        raise InvalidInput("options.model", "no model: pass model= or set options.model")
    return chosen


def _collapse(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """Text-only content as one string; mixed content as the part list."""
    if all(p["type"] == "text" for p in parts):
        return "".join(p["text"] for p in parts)
    return parts


def _text_of(blocks: list[Block], blob_reader: BlobReader | None, where: str) -> str:
    """Text-only rendering: text as is, media as surrogates, thinking/tool blocks skipped."""
    out: list[str] = []
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            out.append(block["text"])
        elif block["type"] == "document":
            text = document_text(block, blob_reader, f"{where}[{i}]")
            out.append(text if text is not None else surrogate(block))
        elif block["type"] in ("image", "audio"):
            out.append(surrogate(block))
    return "".join(out)


def _user_part(block: Block, blob_reader: BlobReader | None, where: str) -> dict[str, Any] | None:
    kind = block["type"]
    if kind == "text":
        return {"type": "text", "text": block["text"]}
    if kind == "image":
        url = data_url(block["mime_type"], read_blob(block, blob_reader, where))
        return {"type": "image_url", "image_url": {"url": url}}
    if kind == "audio":
        fmt = OPENAI_AUDIO_FORMATS.get(block["mime_type"].lower())
        if fmt is None:
            return {"type": "text", "text": surrogate(block)}
        return {
            "type": "input_audio",
            "input_audio": {"data": b64(read_blob(block, blob_reader, where)), "format": fmt},
        }
    if kind == "document":
        text = document_text(block, blob_reader, where)
        if text is not None:
            return {"type": "text", "text": text}
        file = {
            "filename": block.get("name", "document"),
            "file_data": data_url(block["mime_type"], read_blob(block, blob_reader, where)),
        }
        return {"type": "file", "file": file}
    if kind == "thinking":
        return None
    raise InvalidInput(where, f"a {kind} block cannot stand in a user message")


def _user_message(
    blocks: list[Block], blob_reader: BlobReader | None, where: str
) -> list[dict[str, Any]]:
    parts = [p for i, b in enumerate(blocks) if (p := _user_part(b, blob_reader, f"{where}[{i}]"))]
    return [{"role": "user", "content": _collapse(parts)}] if parts else []


def _tool_call(block: Block) -> dict[str, Any]:
    arguments = json.dumps(block["input"], ensure_ascii=False)
    return {
        "id": block["id"],
        "type": "function",
        "function": {"name": block["name"], "arguments": arguments},
    }


def _assistant_message(
    blocks: list[Block], blob_reader: BlobReader | None, where: str
) -> list[dict[str, Any]]:
    for i, block in enumerate(blocks):
        if block["type"] == "tool_result":
            raise InvalidInput(
                f"{where}[{i}]", "a tool_result block cannot stand in an assistant message"
            )
    text = _text_of(blocks, blob_reader, where)
    calls = [_tool_call(b) for b in blocks if b["type"] == "tool_use"]
    if not text and not calls:
        return []
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    return [message]


def _tool_messages(
    block: Block, blob_reader: BlobReader | None, where: str
) -> tuple[dict[str, Any], list[Block]]:
    """One tool message for a tool_result, and the media parts it could not carry."""
    texts: list[str] = []
    media: list[Block] = []
    for i, part in enumerate(block["content"]):
        text = part["text"] if part["type"] == "text" else None
        if part["type"] == "document":
            text = document_text(part, blob_reader, f"{where}.content[{i}]")
        if text is None:
            media.append(part)
        else:
            texts.append(text)
    content = ("[error] " if block.get("is_error") else "") + "".join(texts)
    return {"role": "tool", "tool_call_id": block["tool_use_id"], "content": content}, media


def _results_and_rest(
    blocks: list[Block], blob_reader: BlobReader | None, where: str
) -> list[dict[str, Any]]:
    """A tool (or user) message: tool messages first, then media and any other blocks."""
    out: list[dict[str, Any]] = []
    follow: list[Block] = []
    for i, block in enumerate(blocks):
        if block["type"] != "tool_result":
            follow.append(block)
            continue
        message, media = _tool_messages(block, blob_reader, f"{where}[{i}]")
        out.append(message)
        if media:
            follow.append(
                {"type": "text", "text": f"[returned by tool call {block['tool_use_id']}]"}
            )
            follow.extend(media)
    return out + _user_message(follow, blob_reader, where)


def openai_messages(
    message: Mapping[str, Any], blob_reader: BlobReader | None, where: str
) -> list[dict[str, Any]]:
    """The OpenAI chat messages one normalized message becomes (zero, one or several)."""
    role, blocks = message["role"], message["content"]
    where = f"{where}.content"
    if role == "system":
        text = _text_of(blocks, blob_reader, where)
        return [{"role": "system", "content": text}] if text else []
    if role == "assistant":
        return _assistant_message(blocks, blob_reader, where)
    if role in ("user", "tool"):
        return _results_and_rest(blocks, blob_reader, where)
    raise InvalidInput(where, f"unknown role {role!r}")


def openai_tools(options: Mapping[str, Any]) -> dict[str, Any]:
    """`tools` and `tool_choice` in OpenAI's shape (empty when no tools are set)."""
    out: dict[str, Any] = {}
    tools = neutral_tools(options)
    if tools:
        out["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t["name"],
                    "parameters": t["input_schema"],
                    **({"description": t["description"]} if "description" in t else {}),
                },
            }
            for t in tools
        ]
    if options.get("tool_choice") is not None:
        choice = neutral_tool_choice(options["tool_choice"])
        out["tool_choice"] = (
            choice
            if isinstance(choice, str)
            else {"type": "function", "function": {"name": choice["name"]}}
        )
    return out


def _extra(options: Mapping[str, Any], key: str) -> dict[str, Any]:
    extra = options.get(key) or {}
    if not isinstance(extra, Mapping):
        raise InvalidInput(f"options.{key}", "must be a table of provider-specific fields")
    return dict(extra)


def openai_chat_request(
    ctx: Mapping[str, Any], *, model: str | None = None, blob_reader: BlobReader | None = None
) -> dict[str, Any]:
    """An OpenAI Chat Completions request body for the context (see module docstring)."""
    from ..tool_ids import link_results

    options = ctx.get("options") or {}
    messages: list[dict[str, Any]] = []
    for i, message in enumerate(link_results(ctx["messages"])):
        messages.extend(openai_messages(message, blob_reader, f"messages[{i}]"))
    if not messages:
        raise InvalidInput("messages", "the context holds nothing to send")
    body: dict[str, Any] = {"model": _model(model, options), "messages": messages}
    body.update(pick(options, OPENAI_CHAT_OPTIONS))
    body.update(openai_tools(options))
    body.update(_extra(options, "openai"))
    return body


def completion_prompt(ctx: Mapping[str, Any], *, include_system: bool = False) -> dict[str, str]:
    """`{"prompt": text}`: the readable text of every message, concatenated exactly.

    No separators and no role markers are added (base models and buffer trees see the
    text as written). System messages are left out unless `include_system`.
    """
    parts = [
        plain_text(m["content"]) for m in ctx["messages"] if include_system or m["role"] != "system"
    ]
    return {"prompt": "".join(parts)}


def openai_completion_request(
    ctx: Mapping[str, Any], *, model: str | None = None, include_system: bool = False
) -> dict[str, Any]:
    """An OpenAI (legacy) Completions body: `completion_prompt` plus sampling options."""
    options = ctx.get("options") or {}
    body: dict[str, Any] = {
        "model": _model(model, options),
        **completion_prompt(ctx, include_system=include_system),
    }
    body.update(pick(options, OPENAI_COMPLETION_OPTIONS))
    body.update(_extra(options, "openai"))
    return body
