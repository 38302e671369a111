"""Parsing provider replies back into loomdb blocks (text, tool_use, thinking).

OpenAI-shaped replies arrive as plain dicts: the `openai` SDK's objects are turned into
their JSON with `to_dict()`, and llama.cpp (in process or as a server) already speaks
that shape, so one parser serves every OpenAI-compatible source, streamed or not.
Anthropic replies are `anthropic.types.Message` objects (or their dicts).

Rules: OpenAI `tool_calls` become `tool_use` blocks whose `input` is the decoded JSON
arguments (arguments that are not a JSON object are kept as
`{"_unparsed_arguments": "<text>"}` rather than lost); a `reasoning_content` or
`reasoning` string (vLLM, OpenRouter, DeepSeek) becomes a leading unsigned `thinking`
block; a `refusal` becomes text. Anthropic `redacted_thinking` and server-tool blocks
have no loomdb block type and are left out (they stay in `raw_response`).
Finish reasons are mapped to Anthropic's words (`FINISH_REASONS`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ProviderError

FINISH_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}


@dataclass
class Reply:
    """The parsed part of a reply, before timing and request are attached."""

    content: list[dict[str, Any]]
    stop_reason: str | None
    usage: dict[str, int] | None
    model: str | None


def ensure_content(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """At least one block: an empty answer is one empty text block."""
    return blocks or [{"type": "text", "text": ""}]


def tool_input(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, Mapping):
        return dict(arguments)
    try:
        value = json.loads(arguments or "{}")
    except (TypeError, ValueError):
        value = None
    return value if isinstance(value, dict) else {"_unparsed_arguments": str(arguments)}


def openai_usage(usage: Mapping[str, Any] | None) -> dict[str, int] | None:
    if not usage:
        return None
    out = {
        "input_tokens": int(usage.get("prompt_tokens") or 0),
        "output_tokens": int(usage.get("completion_tokens") or 0),
    }
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
    if cached:
        out["cache_read_input_tokens"] = int(cached)
    return out


def finish_reason(reason: str | None) -> str | None:
    return FINISH_REASONS.get(reason, reason) if reason else None


def _first_choice(raw: Mapping[str, Any], provider: str) -> Mapping[str, Any]:
    choices = raw.get("choices") if isinstance(raw, Mapping) else None
    if not choices or not isinstance(choices[0], Mapping):
        raise ProviderError(provider, f"malformed response: no choices in {str(raw)[:200]!r}")
    return choices[0]


def _message_blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        blocks.append({"type": "thinking", "thinking": reasoning})
    text = message.get("content") or message.get("refusal")
    if isinstance(text, str) and text:
        blocks.append({"type": "text", "text": text})
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        blocks.append(
            {
                "type": "tool_use",
                "id": call.get("id") or "",
                "name": fn.get("name") or "",
                "input": tool_input(fn.get("arguments")),
            }
        )
    return blocks


def parse_openai_chat(raw: Mapping[str, Any], provider: str) -> Reply:
    """A Chat Completions reply (one choice) as blocks."""
    choice = _first_choice(raw, provider)
    message = choice.get("message")
    if not isinstance(message, Mapping):
        raise ProviderError(provider, "malformed response: the choice has no message")
    reason = (
        "refusal"
        if message.get("refusal") and not message.get("content")
        else choice.get("finish_reason")
    )
    return Reply(
        ensure_content(_message_blocks(message)),
        finish_reason(reason),
        openai_usage(raw.get("usage")),
        raw.get("model"),
    )


def parse_openai_completion(raw: Mapping[str, Any], provider: str) -> Reply:
    """A (legacy) Completions reply (one choice) as one text block."""
    choice = _first_choice(raw, provider)
    text = choice.get("text")
    if not isinstance(text, str):
        raise ProviderError(provider, "malformed response: the choice has no text")
    return Reply(
        [{"type": "text", "text": text}],
        finish_reason(choice.get("finish_reason")),
        openai_usage(raw.get("usage")),
        raw.get("model"),
    )


class OpenAIStream:
    """Assembles streamed OpenAI-shaped chunks (chat or completions) into one reply."""

    def __init__(self, provider: str, chat: bool) -> None:
        self.provider = provider
        self.chat = chat
        self.chunks: list[dict[str, Any]] = []
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish: str | None = None
        self.usage: Mapping[str, Any] | None = None
        self.model: str | None = None

    def add(self, chunk: dict[str, Any]) -> str:
        """Take one chunk; return the text it adds (for the stream callback)."""
        self.chunks.append(chunk)
        self.model = chunk.get("model") or self.model
        self.usage = chunk.get("usage") or self.usage
        added = ""
        for choice in chunk.get("choices") or []:
            self.finish = choice.get("finish_reason") or self.finish
            delta = (choice.get("delta") or {}) if self.chat else {"content": choice.get("text")}
            added += self._take(delta)
        return added

    def _take(self, delta: Mapping[str, Any]) -> str:
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str):
            self.reasoning.append(reasoning)
        for call in delta.get("tool_calls") or []:
            slot = self.calls.setdefault(
                call.get("index", len(self.calls)), {"id": "", "name": "", "args": ""}
            )
            fn = call.get("function") or {}
            slot["id"] = call.get("id") or slot["id"]
            slot["name"] += fn.get("name") or ""
            slot["args"] += fn.get("arguments") or ""
        text = delta.get("content")
        if isinstance(text, str) and text:
            self.text.append(text)
            return text
        return ""

    def reply(self) -> Reply:
        blocks: list[dict[str, Any]] = []
        if self.reasoning:
            blocks.append({"type": "thinking", "thinking": "".join(self.reasoning)})
        if self.text:
            blocks.append({"type": "text", "text": "".join(self.text)})
        for _, call in sorted(self.calls.items()):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call["id"],
                    "name": call["name"],
                    "input": tool_input(call["args"]),
                }
            )
        return Reply(
            ensure_content(blocks), finish_reason(self.finish), openai_usage(self.usage), self.model
        )


def anthropic_usage(usage: Mapping[str, Any] | None) -> dict[str, int] | None:
    if not usage:
        return None
    keys = (
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    )
    return {k: int(usage[k]) for k in keys if usage.get(k) is not None}


def _anthropic_block(block: Mapping[str, Any]) -> dict[str, Any] | None:
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": block.get("text") or ""}
    if kind == "thinking":
        out = {"type": "thinking", "thinking": block.get("thinking") or ""}
        return {**out, "signature": block["signature"]} if block.get("signature") else out
    if kind == "tool_use":
        return {
            "type": "tool_use",
            "id": block.get("id") or "",
            "name": block.get("name") or "",
            "input": tool_input(block.get("input")),
        }
    return None


def parse_anthropic_message(message: Any, provider: str = "anthropic") -> Reply:
    """An `anthropic.types.Message` (or its dict) as blocks."""
    raw = message.to_dict() if hasattr(message, "to_dict") else message
    if not isinstance(raw, Mapping) or not isinstance(raw.get("content"), list):
        raise ProviderError(provider, f"malformed response: no content list in {str(raw)[:200]!r}")
    blocks = [b for block in raw["content"] if (b := _anthropic_block(block)) is not None]
    return Reply(
        ensure_content(blocks),
        raw.get("stop_reason"),
        anthropic_usage(raw.get("usage")),
        raw.get("model"),
    )
