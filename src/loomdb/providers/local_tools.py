"""Tool calls for a local model without native tool support: the tools are described
in a system message and the answer is constrained, with llama.cpp's JSON-schema
grammar, to one JSON object:

    {"tool": NAME, "input": {...}}     a call of one of the offered tools
    {"answer": TEXT}                   a final answer (not offered when a call is required)

The reply is then read back into a `tool_use` block or a text block, so the rest of
loomdb sees the same content as from a provider with native tool calls.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..model import new_id
from .blocks import neutral_tool_choice, neutral_tools

_ANSWER = {"type": "object", "properties": {"answer": {"type": "string"}},
           "required": ["answer"], "additionalProperties": False}


def _closed(schema: Mapping[str, Any]) -> dict[str, Any]:
    """An input schema that allows no properties beyond those it names."""
    out = dict(schema)
    if out.get("type", "object") == "object":
        out.setdefault("type", "object")
        out.setdefault("properties", {})
        out.setdefault("additionalProperties", False)
    return out


def tool_response_format(options: Mapping[str, Any]) -> dict[str, Any] | None:
    """The `response_format` for llama.cpp, or None when no tool may be called."""
    tools = neutral_tools(options)
    choice = neutral_tool_choice(options.get("tool_choice") or "auto")
    if not tools or choice == "none":
        return None
    if isinstance(choice, dict):
        tools = [t for t in tools if t["name"] == choice["name"]] or tools
    calls = [{"type": "object",
              "properties": {"tool": {"const": t["name"]}, "input": _closed(t["input_schema"])},
              "required": ["tool", "input"], "additionalProperties": False} for t in tools]
    branches = calls if choice != "auto" else [*calls, _ANSWER]
    schema = branches[0] if len(branches) == 1 else {"anyOf": branches}
    return {"type": "json_object", "schema": schema}


def tool_prompt(options: Mapping[str, Any]) -> str:
    """The system message that tells the model which tools it has and how to reply."""
    lines = ["You can call tools. Reply with one JSON object: "
             '{"tool": NAME, "input": {...}} to call a tool, or {"answer": TEXT} to answer.',
             "Tools:"]
    for t in neutral_tools(options):
        lines.append(f"- {t['name']}: {t.get('description') or ''} "
                     f"input schema {json.dumps(t['input_schema'], ensure_ascii=False)}")
    return "\n".join(lines)


def read_tool_reply(content: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str | None]:
    """(blocks, stop reason) from a constrained reply; unreadable text stays as it is."""
    text = "".join(b["text"] for b in content if b["type"] == "text")
    try:
        value = json.loads(text)
    except ValueError:
        return content, None
    if isinstance(value, dict) and isinstance(value.get("tool"), str):
        args = value.get("input") if isinstance(value.get("input"), dict) else {}
        call = {"type": "tool_use", "id": f"call_{new_id()}", "name": value["tool"],
                "input": args}
        return [call], "tool_use"
    if isinstance(value, dict) and isinstance(value.get("answer"), str):
        return [{"type": "text", "text": value["answer"]}], None
    return content, None
