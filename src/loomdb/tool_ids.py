"""Tool blocks as seed 002 has them: a `tool_use` may come without an `id`, a
`tool_result` names its tool (`name`) and may come without a `tool_use_id`.

A missing tool_use id is generated when the content is validated, before its content
id is computed, and deterministically (a hash of the tool's name, its input and the
block's place in the content): the same content always gets the same id, so content
ids stay stable and deduplication still works. A tool_result without a tool_use_id is
linked when a request is built for a provider that needs the link (OpenAI's
`tool_call_id`, Anthropic's `tool_use_id`): to the latest earlier call of the same
tool not yet answered, else to an id made from its name. Stored content is never
rewritten, so stores written before this keep verifying.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .canonical import canonical, digest
from .errors import InvalidInput

PREFIX = "toolu_"


def generated_id(name: str, tool_input: Any, index: int) -> str:
    """The id a tool_use without one gets: stable for the same name, input and place."""
    doc = {"name": name, "input": tool_input, "index": index}
    return PREFIX + digest(canonical(doc))[len("sha256:"):][:24]


def complete(blocks: list[dict[str, Any]], where: str) -> list[dict[str, Any]]:
    """Validated blocks with every tool_use given an id; a tool_result must say what it
    answers (its tool's `name`, or the `tool_use_id` of the call)."""
    out = blocks
    for i, block in enumerate(blocks):
        kind = block["type"]
        if kind == "tool_use" and "id" not in block:
            if out is blocks:
                out = list(blocks)
            out[i] = {**block, "id": generated_id(block["name"], block["input"], i)}
        elif kind == "tool_result" and "name" not in block and "tool_use_id" not in block:
            raise InvalidInput(f"{where}[{i}]", "a tool_result needs the name of the tool it "
                               "answers (or the tool_use_id of the call)")
    return out


def link_results(messages: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """`messages` with a tool_use_id on every tool_result (see the module docstring);
    the same list when every result has one already (the usual case)."""
    if not any(b.get("type") == "tool_result" and "tool_use_id" not in b
               for m in messages for b in m["content"]):
        return messages
    open_calls: list[tuple[str, str]] = []  # (name, id) of calls not yet answered
    out: list[Mapping[str, Any]] = []
    for message in messages:
        blocks = []
        for block in message["content"]:
            if block["type"] == "tool_use":
                open_calls.append((block["name"], block["id"]))
            elif block["type"] == "tool_result":
                block = _linked(block, open_calls)
            blocks.append(block)
        out.append({**message, "content": blocks})
    return out


def _linked(block: Mapping[str, Any], open_calls: list[tuple[str, str]]) -> Mapping[str, Any]:
    if "tool_use_id" in block:
        answered = block["tool_use_id"]
        open_calls[:] = [c for c in open_calls if c[1] != answered]
        return block
    name = block["name"]
    for k in range(len(open_calls) - 1, -1, -1):
        if open_calls[k][0] == name:
            return {**block, "tool_use_id": open_calls.pop(k)[1]}
    return {**block, "tool_use_id": PREFIX + digest(name.encode())[len("sha256:"):][:24]}


def result_label(block: Mapping[str, Any]) -> str:
    """How a tool_result is named in text: its call id, else its tool's name."""
    return str(block.get("tool_use_id") or block.get("name") or "?")
