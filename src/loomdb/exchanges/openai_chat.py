"""The OpenAI Chat Completions wire (`POST /v1/chat/completions`): parse, answer, chunks.

`parse` turns a body into the exchange's internal request (`exchange.Exchange`),
`answer` the internal result into a `chat.completion`, and `Chunks` the internal event
stream (`events.py`) into `chat.completion.chunk`s. Request messages become loomdb's
blocks (`messages.py` keys them):

- text, or text-only parts, is one text block (parts joined): what `requests.py`
  sends for text-only content, so a stored node re-sent by any client keys the same;
- `tool_calls` (and the legacy `function_call`) become tool_use blocks, a `tool` (or
  `function`) message one tool_result block;
- `image_url` data URLs become image blocks whose bytes go to the blob store; remote
  URLs are refused (the gateway stores content, not links);
- reasoning fields are not kept: clients do not re-send them consistently.

A streamed answer's tool calls go out as `tool_calls` deltas (the call's id and name,
then its arguments) and end with `finish_reason: "tool_calls"`, as OpenAI streams
them; the node recorded is the one a whole answer makes. A history of plain messages
is converted by list comprehensions, with no object per message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from .events import Close, Delta, End, Event, Open
from .exchange import Exchange, loomdb_part, own_usage
from .messages import Blobs, Blocks, Message, Messages, stored_media, utf8
from .messages import message as message_of

if TYPE_CHECKING:
    from ..providers.base import Completion
    from .exchange import Gateway, Result

NAME = "openai-chat"
ROLES = {
    "system": "system", "developer": "system", "user": "user", "assistant": "assistant",
    "tool": "tool", "function": "tool",
}
_SIMPLE = {"user", "assistant", "system", "developer"}
#: the fields of a message the fast path takes (anything else: the general path)
_PLAIN = {"role", "content", "name"}
FINISH = {"end_turn": "stop", "max_tokens": "length", "stop_sequence": "stop",
          "tool_use": "tool_calls", "refusal": "content_filter"}
#: request fields passed to the model as options (the rest are the gateway's or unused)
OPTION_KEYS = (
    "temperature", "top_p", "max_tokens", "stop", "seed", "frequency_penalty",
    "presence_penalty", "response_format", "logit_bias", "parallel_tool_calls", "user",
    "tools", "tool_choice", "reasoning_effort", "top_k", "min_p", "repeat_penalty",
)


def parse(gw: Gateway, body: Mapping[str, Any]) -> Exchange:
    """A chat completions body -> the internal request (typed errors name the field)."""
    ex = gw.exchange(body, messages(body.get("messages")), options_of(body),
                     n=body.get("n") or 1, logprobs=bool(body.get("logprobs")),
                     params={k: v for k, v in body.items() if k != "messages"})
    ex.wire["stream_options"] = body.get("stream_options")
    return ex


def options_of(body: Mapping[str, Any]) -> dict[str, Any]:
    """The model options a chat-shaped body asks for."""
    options = {k: body[k] for k in OPTION_KEYS if body.get(k) is not None}
    if body.get("max_completion_tokens") is not None:
        options["max_tokens"] = body["max_completion_tokens"]
    if body.get("logprobs"):
        options["logprobs"] = True
        options["top_logprobs"] = _top(body.get("top_logprobs"))
    return options


def _top(value: Any) -> int:
    if value is None:
        return 0
    if type(value) is not int or not 0 <= value <= 20:
        raise InvalidInput("top_logprobs", "must be an integer from 0 to 20")
    return value


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
        return Messages.texts(roles, [m["content"] for m in raw])
    return Messages.of([message(m, f"{where}[{i}]") for i, m in enumerate(raw)])


def message(msg: Any, where: str) -> Message:
    """One message of any accepted shape."""
    if not isinstance(msg, dict):
        raise InvalidInput(where, "a message must be a JSON object")
    given = msg.get("role")
    role = ROLES.get(given) if isinstance(given, str) else None
    if role is None:
        raise InvalidInput(f"{where}.role", f"unknown role {msg.get('role')!r}")
    blobs: Blobs = {}
    if role == "tool":
        blocks = [_tool_result(msg, where)]
    else:
        blocks = _content(msg.get("content"), f"{where}.content", blobs) + _calls(msg, where)
    return message_of(role, blocks, blobs)


def _content(content: Any, where: str, blobs: Blobs) -> Blocks:
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": utf8(content, where)}]
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


def _part(part: Any, where: str, blobs: Blobs) -> dict[str, Any]:
    if not isinstance(part, dict):
        raise InvalidInput(where, "a content part must be a JSON object")
    kind = part.get("type")
    if kind in ("text", "input_text", "output_text") and isinstance(part.get("text"), str):
        return {"type": "text", "text": utf8(part["text"], where)}
    if kind == "refusal" and isinstance(part.get("refusal"), str):
        return {"type": "text", "text": part["refusal"]}
    if kind in ("image_url", "input_image"):
        spec = part.get("image_url")
        url = spec.get("url") if isinstance(spec, dict) else spec
        return _image(url, where, blobs)
    raise InvalidInput(where, f"unsupported content part type {kind!r}")


def _image(url: Any, where: str, blobs: Blobs) -> dict[str, Any]:
    if not isinstance(url, str) or not url.startswith("data:") or "," not in url:
        raise InvalidInput(where, "images must be data: URLs (the gateway stores the bytes)")
    head, payload = url[5:].split(",", 1)
    mime = head.split(";")[0] or "image/png"
    return stored_media("image", payload, mime, where, blobs, encoded=";base64" in head)


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
def answer(ex: Exchange, result: Result) -> dict[str, Any]:
    """The chat.completion body: ids are node ids, the first answer's is the response's."""
    return {
        "id": ex.ids[0], "object": "chat.completion", "created": ex.created, "model": ex.model,
        "choices": [
            {"index": i, "message": assistant_message(a.content),
             "finish_reason": finish_reason(ex.stop_reason(a)),
             "logprobs": raw_logprobs(a.raw_response) if ex.logprobs else None}
            for i, a in enumerate(result.answers)
        ],
        "usage": usage(own_usage(result)),
        "system_fingerprint": None,
        "loomdb": loomdb_part(ex, result.recorded),
    }


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


def raw_logprobs(raw: Any) -> Any:
    """The choice's logprobs exactly as the provider gave them (chat shape)."""
    if isinstance(raw, Mapping):
        choices = raw.get("choices") or [{}]
        return choices[0].get("logprobs")
    return None


class Chunks:
    """The internal event stream as `chat.completion.chunk`s (each choice opens with its
    role; the closing chunks, after the commit, carry loomdb's part)."""

    def __init__(self, ex: Exchange) -> None:
        self.ex = ex
        self.usage_wanted = bool((ex.wire.get("stream_options") or {}).get("include_usage"))
        self.started: set[int] = set()
        self.calls: dict[int, int] = {}
        self.kind: dict[int, str] = {}

    def take(self, event: Event) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if isinstance(event, End):
            return self._end(event.result)
        choice = getattr(event, "choice", None)
        if choice is None:
            return out
        if choice not in self.started:
            self.started.add(choice)
            out.append(self.chunk(choice, {"role": "assistant", "content": ""}))
        if isinstance(event, Open):
            self.kind[choice] = event.block["type"]
            if event.block["type"] == "tool_use":
                k = self.calls[choice] = self.calls.get(choice, -1) + 1
                out.append(self.chunk(choice, {"tool_calls": [{
                    "index": k, "id": event.block["id"], "type": "function",
                    "function": {"name": event.block["name"], "arguments": ""}}]}))
        elif isinstance(event, Delta):
            if event.kind == "text":
                out.append(self.chunk(choice, {"content": event.text}))
            elif event.kind == "thinking":
                out.append(self.chunk(choice, {"reasoning_content": event.text}))
            elif event.kind == "input_json" and self.kind.get(choice) == "tool_use":
                out.append(self.chunk(choice, {"tool_calls": [{
                    "index": self.calls[choice], "function": {"arguments": event.text}}]}))
        elif isinstance(event, Close):
            self.kind.pop(choice, None)
        return out

    def _end(self, result: Result) -> list[dict[str, Any]]:
        out = []
        for i, a in enumerate(result.answers):
            if i not in self.started:
                out.append(self.chunk(i, {"role": "assistant", "content": ""}))
            out.append(self.chunk(i, {}, finish_reason(self.ex.stop_reason(a)), result))
        if self.usage_wanted:
            out.append({**self.chunk(0, {}), "choices": [],
                        "usage": usage(own_usage(result))})
        return out

    def chunk(self, index: int, delta: dict[str, Any], finish: str | None = None,
              result: Result | None = None) -> dict[str, Any]:
        """One chat.completion.chunk."""
        ex = self.ex
        out: dict[str, Any] = {
            "id": ex.ids[0], "object": "chat.completion.chunk", "created": ex.created,
            "model": ex.model,
            "choices": [{"index": index, "delta": delta, "finish_reason": finish,
                         "logprobs": None}],
        }
        if result is not None:
            out["loomdb"] = loomdb_part(ex, result.recorded)
        return out


__all__ = ["Completion", "Message", "NAME", "answer", "messages", "parse"]
