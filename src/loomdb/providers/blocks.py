"""Helpers every request builder shares: blob bytes, data URLs, text surrogates, tools.

A normalized context keeps binary payloads in the blob store, so builders fetch bytes
through the caller's `blob_reader(ref) -> bytes` and nothing else. When a provider has
no slot for a block where it stands (audio for Anthropic, an image in an OpenAI
assistant message), the block is sent as a visible *surrogate*: a bracketed text such as
`[image: a cat]`, `[audio transcript: ...]` or `[document report.pdf]`, so the model is
told that something was there and nothing is dropped without trace.

Tools are given in `options["tools"]` in either of two shapes and converted per
provider: the neutral/Anthropic shape `{"name", "description"?, "input_schema"}` (also
accepted: `parameters` for `input_schema`) or OpenAI's
`{"type": "function", "function": {"name", "description"?, "parameters"?}}`.
`options["tool_choice"]` is `"auto"`, `"none"`, `"required"` (alias `"any"`) or
`{"name": tool}`.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import InvalidInput

BlobReader = Callable[[str], bytes]
Block = dict[str, Any]

#: mime types whose bytes are text and can be sent decoded as UTF-8
TEXT_MIME_PREFIXES = ("text/",)
TEXT_MIME_TYPES = ("application/json", "application/xml", "application/x-yaml", "application/yaml")


def read_blob(block: Mapping[str, Any], blob_reader: BlobReader | None, where: str) -> bytes:
    """The bytes behind a media block's `ref`; InvalidInput when no reader was given."""
    if blob_reader is None:
        raise InvalidInput(
            where, f"a {block['type']} block needs blob_reader to read {block['ref']}"
        )
    return blob_reader(block["ref"])


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def data_url(mime_type: str, data: bytes) -> str:
    return f"data:{mime_type};base64,{b64(data)}"


def is_text_mime(mime_type: str) -> bool:
    base = mime_type.split(";")[0].strip().lower()
    return base.startswith(TEXT_MIME_PREFIXES) or base in TEXT_MIME_TYPES


def document_text(
    block: Mapping[str, Any], blob_reader: BlobReader | None, where: str
) -> str | None:
    """A document's text: its `text` field, else its bytes decoded when the mime is textual."""
    if "text" in block:
        return str(block["text"])
    if is_text_mime(block["mime_type"]):
        return read_blob(block, blob_reader, where).decode("utf-8", errors="replace")
    return None


def surrogate(block: Mapping[str, Any]) -> str:
    """The bracketed text standing for a media block a provider cannot take in place."""
    kind = block["type"]
    if kind == "image":
        alt = block.get("alt_text")
        return f"[image: {alt}]" if alt else f"[image {block['mime_type']}]"
    if kind == "audio":
        if "transcript" in block:
            return f"[audio transcript: {block['transcript']}]"
        return f"[audio {block['mime_type']}, no transcript]"
    if kind == "document":
        label = block.get("name") or block["mime_type"]
        return f"[document {label}]\n{block['text']}" if "text" in block else f"[document {label}]"
    raise ValueError(f"no surrogate for {kind!r}")


def neutral_tool(tool: Mapping[str, Any], where: str) -> dict[str, Any]:
    """One tool definition as `{"name", "description"?, "input_schema"}`."""
    if tool.get("type") == "function" and isinstance(tool.get("function"), Mapping):
        fn = tool["function"]
        spec = {
            "name": fn.get("name"),
            "description": fn.get("description"),
            "input_schema": fn.get("parameters"),
        }
    else:
        schema = tool.get("input_schema", tool.get("parameters"))
        spec = {
            "name": tool.get("name"),
            "description": tool.get("description"),
            "input_schema": schema,
        }
    if not isinstance(spec["name"], str) or not spec["name"]:
        raise InvalidInput(where, "a tool needs a name")
    if spec["input_schema"] is None:
        spec["input_schema"] = {"type": "object", "properties": {}}
    return {k: v for k, v in spec.items() if v is not None}


def neutral_tools(options: Mapping[str, Any]) -> list[dict[str, Any]]:
    tools = options.get("tools") or []
    if not isinstance(tools, list):
        raise InvalidInput("options.tools", "must be a list of tool definitions")
    for i, t in enumerate(tools):
        if not isinstance(t, Mapping):
            raise InvalidInput(f"options.tools[{i}]", "names a tool: only an agent's turn runs "
                               "named tools (`loomdb generate`); a model request takes definitions")
    return [neutral_tool(t, f"options.tools[{i}]") for i, t in enumerate(tools)]


def neutral_tool_choice(choice: Any) -> str | dict[str, str]:
    """`auto` / `none` / `required` or `{"name": tool}`, from any accepted spelling."""
    if choice in ("auto", "none", "required"):
        return str(choice)
    if choice == "any":
        return "required"
    if isinstance(choice, Mapping):
        name = choice.get("name") or (choice.get("function") or {}).get("name")
        if isinstance(name, str) and name:
            return {"name": name}
    raise InvalidInput(
        "options.tool_choice", f"expected auto, none, required or {{'name': ...}}, got {choice!r}"
    )


def pick(options: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """The options among `keys` that are set (None means unset)."""
    return {k: options[k] for k in keys if options.get(k) is not None}
