"""The Anthropic Messages wire (`POST /v1/messages`): parse, answer, chunks.

What Claude Code and the `anthropic` SDK send, as loomdb's blocks:

- `system`, a string or a list of text blocks, is the path's leading system message
  (its blocks kept apart), and a `system` message among the messages (Claude Code
  sends its environment so) a system node where it stands; `cache_control` marks are
  not content: they are left out of the blocks and the keys (a client moves them every
  turn), and kept with the request;
- `text`, `image` and `document` blocks (base64 bytes go to the blob store; a text
  document's text too, named by its title), `tool_use`, `tool_result` (its content a
  string or blocks, `is_error` kept) and `thinking` (its signature kept; never part of
  a key). `redacted_thinking` has no loomdb block and is left out; a block the gateway
  does not know is refused, naming it;
- `max_tokens`, `temperature`, `top_p`, `top_k`, `stop_sequences`, `tools`,
  `tool_choice` (auto, any, tool, none), `thinking` and `metadata` are the model's
  options. When the served alias's provider is `anthropic` (loomdb as a recording
  proxy), the body goes upstream as the client sent it (its messages with their cache
  marks, `system`, `tools`, `thinking`, `context_management`... only `model` is the
  alias's), with its `anthropic-beta` header.

`answer` is a `message` object, its id the answer's node id; `Chunks` is Anthropic's
event sequence: `message_start`, `ping`, per block `content_block_start` /
`content_block_delta` (`text_delta`, `thinking_delta`, `signature_delta`,
`input_json_delta`) / `content_block_stop`, then `message_delta` (stop reason, usage)
and `message_stop` after the commit. `count_tokens` answers loomdb's own count
(`loomdb.tokens`), the yardstick its budgets use.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from .events import Begin, Close, Delta, End, Event, Open
from .exchange import loomdb_part, own_usage
from .messages import Blobs, Blocks, Message, Messages, message, stored_media, utf8

if TYPE_CHECKING:
    from .exchange import Exchange, Gateway, Result

NAME = "anthropic-messages"
#: fields the gateway reads itself; any other goes upstream to an `anthropic` alias
_READ = {"model", "messages", "max_tokens", "stream", "stop_sequences", "metadata",
         "thinking", "system", "tools", "tool_choice", "temperature", "top_p", "top_k"}
_CHOICES = {"auto": "auto", "any": "required", "none": "none"}
_PLAIN_ROLES = {"user", "assistant"}
_DELTA = {"text": ("text_delta", "text"), "thinking": ("thinking_delta", "thinking"),
          "signature": ("signature_delta", "signature"),
          "input_json": ("input_json_delta", "partial_json")}


def parse(gw: Gateway, body: Mapping[str, Any], beta: str | None = None,
          source: Any = None) -> Exchange:
    """A Messages body -> the internal request (typed errors name the field). `source`:
    the body's text (`gateway.body.Source`), which a recording proxy sends on with only
    `model` replaced."""
    spec = gw.spec(body.get("model"))
    msgs = messages(body.get("messages"), body.get("system"))
    options = options_of(body)
    forward = None
    if spec.kind == "anthropic":  # a recording proxy: upstream gets what the client sent
        options["anthropic"] = {k: v for k, v in body.items() if k not in ("model", "stream")}
        if beta:
            options["anthropic_beta"] = [b.strip() for b in beta.split(",") if b.strip()]
        if source is not None and spec.model:
            forward = source.replaced("model", spec.model)
    params = {k: v for k, v in body.items() if k not in ("messages", "system")}
    if beta:
        params["anthropic-beta"] = beta
    # a proxy's model is sent the client's body: no messages are made for it
    return gw.exchange(body, msgs, options, params=params, forward=forward,
                       sent=[] if spec.kind == "anthropic" else None)


def options_of(body: Mapping[str, Any]) -> dict[str, Any]:
    """The model options a Messages body asks for, in loomdb's neutral terms."""
    options: dict[str, Any] = {k: body[k] for k in (
        "max_tokens", "temperature", "top_p", "top_k", "metadata", "thinking")
        if body.get(k) is not None}
    if body.get("stop_sequences"):
        options["stop"] = list(body["stop_sequences"])
    if body.get("tools"):
        options["tools"] = [_tool(t, f"tools[{i}]") for i, t in enumerate(body["tools"])]
    choice = body.get("tool_choice")
    if choice is not None:
        kind = choice.get("type") if isinstance(choice, dict) else None
        if kind == "tool" and isinstance(choice.get("name"), str):
            options["tool_choice"] = {"name": choice["name"]}
        elif kind in _CHOICES:
            options["tool_choice"] = _CHOICES[kind]
        else:
            raise InvalidInput("tool_choice", "must be {\"type\": auto, any, tool or none}")
    return options


def _tool(tool: Any, where: str) -> dict[str, Any]:
    if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
        raise InvalidInput(where, "a tool is a JSON object with a name")
    out = {"name": tool["name"], "input_schema": tool.get("input_schema")
           or {"type": "object", "properties": {}}}
    if isinstance(tool.get("description"), str):
        out["description"] = tool["description"]
    return out


def messages(raw: Any, system: Any = None) -> Messages:
    """Messages (and `system`) -> Messages; bad shapes raise InvalidInput naming the field."""
    if not isinstance(raw, list) or not raw:
        raise InvalidInput("messages", "must be a non-empty list of messages")
    if system is None:  # plain turns (a string each): no object per message
        plain = _plain(raw)
        if plain is not None:
            return Messages.texts(*plain)
    out: list[Message] = []
    if system is not None and system != "" and system != []:
        out.append(message("system", _system(system)))
    for i, msg in enumerate(raw):
        where = f"messages[{i}]"
        if not isinstance(msg, dict) or msg.get("role") not in ("user", "assistant", "system"):
            raise InvalidInput(f"{where}.role", "a message is {\"role\": user, assistant or "
                               "system, \"content\": ...}")
        blobs: Blobs = {}
        role = msg["role"]
        if role == "system":
            out.append(message("system", _system(msg.get("content"), f"{where}.content")))
            continue
        blocks = _content(msg.get("content"), role, f"{where}.content", blobs)
        if role == "user" and blocks and all(b["type"] == "tool_result" for b in blocks):
            role = "tool"  # tool results are their own message, as every wire stores them
        out.append(message(role, blocks, blobs))
    return Messages.of(out)


def _plain(raw: list[Any]) -> tuple[list[str], list[str]] | None:
    """(roles, texts) when every message is `{"role": user|assistant, "content": "..."}`
    (a non-empty string), else None: checked a column at a time."""
    if set(map(type, raw)) != {dict} or set(map(len, raw)) != {2}:
        return None
    try:
        roles, texts = [m["role"] for m in raw], [m["content"] for m in raw]
    except KeyError:
        return None
    if not set(roles) <= _PLAIN_ROLES or set(map(type, texts)) != {str} or not all(texts):
        return None
    return roles, texts


def _system(system: Any, where: str = "system") -> Blocks:
    if isinstance(system, str):
        return [{"type": "text", "text": utf8(system, where)}]
    if not isinstance(system, list):
        raise InvalidInput(where, "must be a string or a list of text blocks")
    out: Blocks = []
    for i, block in enumerate(system):
        if not isinstance(block, dict) or block.get("type") != "text" or not isinstance(
                block.get("text"), str):
            raise InvalidInput(f"{where}[{i}]", "must be a text block")
        out.append({"type": "text", "text": utf8(block["text"], f"{where}[{i}]")})
    return out


def _content(content: Any, role: str, where: str, blobs: Blobs) -> Blocks:
    if isinstance(content, str):
        return [{"type": "text", "text": utf8(content, where)}] if content else []
    if not isinstance(content, list):
        raise InvalidInput(where, "must be a string or a list of content blocks")
    out: Blocks = []
    for i, block in enumerate(content):
        kept = _block(block, role, f"{where}[{i}]", blobs)
        if kept is not None:
            out.append(kept)
    return out


def _block(block: Any, role: str, where: str, blobs: Blobs) -> dict[str, Any] | None:
    if not isinstance(block, dict):
        raise InvalidInput(where, "a content block must be a JSON object")
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return {"type": "text", "text": utf8(block["text"], where)}
    if kind in ("image", "document"):
        return _media(kind, block, where, blobs)
    if kind == "tool_use" and role == "assistant" and isinstance(block.get("name"), str):
        given = block.get("input")
        return {"type": "tool_use", "id": str(block.get("id") or ""), "name": block["name"],
                "input": given if isinstance(given, dict) else {}}
    if kind == "tool_result" and role == "user":
        return _tool_result(block, where, blobs)
    if kind == "thinking" and isinstance(block.get("thinking"), str):
        out = {"type": "thinking", "thinking": block["thinking"]}
        if isinstance(block.get("signature"), str) and block["signature"]:
            out["signature"] = block["signature"]
        return out
    if kind == "redacted_thinking":
        return None
    raise InvalidInput(f"{where}.type", f"a {kind!r} block is not taken in a {role} message")


def _media(kind: str, block: dict[str, Any], where: str, blobs: Blobs) -> dict[str, Any]:
    source = block.get("source")
    if not isinstance(source, dict):
        raise InvalidInput(f"{where}.source", "must be a JSON object")
    mime = source.get("media_type")
    data = source.get("data")
    if source.get("type") == "base64" and isinstance(data, str) and isinstance(mime, str):
        out = stored_media(kind, data, mime, f"{where}.source.data", blobs)
    elif kind == "document" and source.get("type") == "text" and isinstance(data, str):
        out = stored_media(kind, data, "text/plain", f"{where}.source.data", blobs,
                           encoded=False)
    else:
        raise InvalidInput(f"{where}.source", "must hold base64 data (or a document's text):"
                           " the gateway stores the bytes, not links")
    if kind == "document" and isinstance(block.get("title"), str):
        out["name"] = block["title"]
    return out


def _tool_result(block: dict[str, Any], where: str, blobs: Blobs) -> dict[str, Any]:
    call = block.get("tool_use_id")
    if not isinstance(call, str) or not call:
        raise InvalidInput(f"{where}.tool_use_id", "a tool_result needs the call's id")
    parts = _content(block.get("content") or "", "user", f"{where}.content", blobs)
    if any(p["type"] not in ("text", "image", "document") for p in parts):
        raise InvalidInput(f"{where}.content", "holds text, images and documents only")
    out: dict[str, Any] = {"type": "tool_result", "tool_use_id": call,
                           "content": parts or [{"type": "text", "text": ""}]}
    if block.get("is_error"):
        out["is_error"] = True
    return out


# == answers out ====================================================================
def content(blocks: Blocks) -> list[dict[str, Any]]:
    """An answer's blocks as Anthropic content blocks."""
    out: list[dict[str, Any]] = []
    for block in blocks:
        kind = block["type"]
        if kind == "text" and (block["text"] or len(blocks) == 1):
            out.append({"type": "text", "text": block["text"]})
        elif kind == "thinking":
            out.append({"type": "thinking", "thinking": block["thinking"],
                        "signature": block.get("signature", "")})
        elif kind == "tool_use":
            out.append({"type": "tool_use", "id": block["id"], "name": block["name"],
                        "input": block["input"]})
    return out


def usage(given: Mapping[str, int]) -> dict[str, int]:
    out = {"input_tokens": int(given.get("input_tokens", 0)),
           "output_tokens": int(given.get("output_tokens", 0))}
    for key in ("cache_creation_input_tokens", "cache_read_input_tokens"):
        if key in given:
            out[key] = int(given[key])
    return out


def answer(ex: Exchange, result: Result) -> dict[str, Any]:
    """The `message` object (its id is the answer's node id)."""
    first = result.answers[0]
    return {"id": ex.ids[0], "type": "message", "role": "assistant", "model": ex.model,
            "content": content(first.content), "stop_reason": ex.stop_reason(first),
            "stop_sequence": None, "usage": usage(own_usage(result)[0]),
            "loomdb": loomdb_part(ex, result.recorded)}


class Chunks:
    """The internal event stream as Anthropic's stream events (module docstring)."""

    def __init__(self, ex: Exchange) -> None:
        self.ex = ex
        self.index = -1
        self.open = False

    def take(self, event: Event) -> list[dict[str, Any]]:
        if isinstance(event, Begin):
            start: dict[str, Any] = {"id": self.ex.ids[0], "type": "message", "role": "assistant",
                     "model": self.ex.model, "content": [], "stop_reason": None,
                     "stop_sequence": None, "usage": {"input_tokens": 0, "output_tokens": 0}}
            return [{"type": "message_start", "message": start}, {"type": "ping"}]
        if isinstance(event, End):
            return self._end(event.result)
        if getattr(event, "choice", 0) != 0:
            return []
        if isinstance(event, Open):
            self.index += 1
            self.open = True
            block = dict(event.block)
            if block["type"] == "thinking":
                block["signature"] = ""
            return [{"type": "content_block_start", "index": self.index, "content_block": block}]
        if isinstance(event, Delta) and self.open and event.kind in _DELTA:
            kind, field = _DELTA[event.kind]
            return [{"type": "content_block_delta", "index": self.index,
                     "delta": {"type": kind, field: event.text}}]
        if isinstance(event, Close) and self.open:
            self.open = False
            return [{"type": "content_block_stop", "index": self.index}]
        return []

    def _end(self, result: Result) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if self.index < 0:  # an empty answer is one empty text block, as `answer` gives
            out += [{"type": "content_block_start", "index": 0,
                     "content_block": {"type": "text", "text": ""}},
                    {"type": "content_block_stop", "index": 0}]
        first = result.answers[0]
        out.append({"type": "message_delta",
                    "delta": {"stop_reason": self.ex.stop_reason(first),
                              "stop_sequence": None},
                    "usage": usage(own_usage(result)[0]),
                    "loomdb": loomdb_part(self.ex, result.recorded)})
        out.append({"type": "message_stop"})
        return out


def count_tokens(gw: Gateway, body: Mapping[str, Any]) -> dict[str, int]:
    """`POST /v1/messages/count_tokens`: the request's tokens by loomdb's count."""
    from ..providers.budget import tools_tokens
    from ..tokens import count_messages

    gw.spec(body.get("model"))
    msgs = messages(body.get("messages"), body.get("system"))
    total = count_messages(msgs.sent()) + tools_tokens(options_of(body))
    return {"input_tokens": total}


def models(specs: list[Any]) -> dict[str, Any]:
    """`GET /v1/models` in Anthropic's list shape."""
    data = [{"type": "model", "id": s.name, "display_name": s.name,
             "created_at": "1970-01-01T00:00:00Z"} for s in specs]
    return {"data": data, "has_more": False, "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None}
