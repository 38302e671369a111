"""The OpenAI Responses wire (`POST /v1/responses`): parse, answer, chunks.

`previous_response_id` is a node id (every response id is one), looked up as that exact
id and nothing else (never a ref name, a prefix or `~N`): the new input is appended after
that node, whatever wrote it, and the model sees that node's context (the path with
loomdb's rules: versions, exclusions, compaction) plus the input. The gateway serves
stores without users only (`front.gateway`), so every node is the operator's.
Without it, the input is a whole conversation, matched like a chat request, with
`instructions` as its leading system message. Input items: a string, messages (text
and image parts), `function_call` and `function_call_output` (tool_use and
tool_result blocks); `reasoning` items are not kept (as a chat request's reasoning).
Tools: the `function` tools are offered to the model; the Responses API's own tools
(`local_shell`, `web_search`, custom tools) are kept with the request only.

`stream: true` answers as the openai SDK and the Codex CLI read it: `response.created`,
`response.in_progress`, then per output item `response.output_item.added`, for a
message `response.content_part.added` / `response.output_text.delta`... /
`response.output_text.done` / `response.content_part.done`, for a call
`response.function_call_arguments.delta` / `.done`, then `response.output_item.done`;
last `response.completed` with the whole response (after the commit).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, NotFound
from ..headish import Position
from . import paths
from .events import Begin, Close, Delta, End, Event, Open
from .exchange import loomdb_part, own_usage
from .messages import Messages, node_key
from .openai_chat import messages as chat_messages_of
from .openai_chat import tool_call, usage

if TYPE_CHECKING:
    from .exchange import Exchange, Gateway, Result

NAME = "openai-responses"
_PASSED = ("temperature", "top_p", "tool_choice", "parallel_tool_calls", "user", "seed",
           "top_logprobs")


def parse(gw: Gateway, body: Mapping[str, Any]) -> Exchange:
    """A Responses body -> the internal request."""
    options = {k: body[k] for k in _PASSED if body.get(k) is not None}
    if body.get("max_output_tokens") is not None:
        options["max_tokens"] = body["max_output_tokens"]
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)
             and t.get("type", "function") == "function"]
    if tools:
        options["tools"] = tools
    elif "tool_choice" in options:
        del options["tool_choice"]
    if isinstance(options.get("tool_choice"), dict) and "name" not in options["tool_choice"]:
        options["tool_choice"] = "required"
    items = chat_messages(body.get("input"))
    previous = body.get("previous_response_id")
    params = {k: v for k, v in body.items() if k != "input"}
    wire = {"previous": previous}
    if previous is None:
        if isinstance(body.get("instructions"), str):
            items.insert(0, {"role": "system", "content": body["instructions"]})
        ex = gw.exchange(body, chat_messages_of(items, "input"), options, params=params)
    else:
        ex = _continued(gw, body, options, str(previous), items, params)
    ex.wire.update(wire)
    return ex


def _continued(
    gw: Gateway, body: Mapping[str, Any], options: dict[str, Any], previous: str,
    items: list[dict[str, Any]], params: dict[str, Any],
) -> Exchange:
    """The path up to `previous` plus the new input; the model sees the path's context."""
    loom = gw.loom
    found = loom.nodes([previous])
    if not found:
        raise NotFound("response", previous[:80])
    node = found[0]
    at = Position(node.id, node.tree, None, None, {})
    path = loom.nodes(loom.path(at))
    new = chat_messages_of(items, "input")
    known = Messages(
        [n.role for n in path], [{"role": n.role, "content": n.content} for n in path],
        [node_key(n.role, n.content) for n in path])
    sent = loom.context(at)["messages"] + new.sent()
    if isinstance(body.get("instructions"), str):
        sent.insert(0, {"role": "system",
                        "content": [{"type": "text", "text": body["instructions"]}]})
    return gw.exchange(body, known + new, options, sent=sent, params=params,
                       after=paths.Hit(len(path) - 1, node.id, node.tree))


def chat_messages(raw: Any) -> list[dict[str, Any]]:
    """Responses input -> chat messages (what `openai_chat.messages` reads)."""
    if isinstance(raw, str):
        return [{"role": "user", "content": raw}]
    if not isinstance(raw, list) or not raw:
        raise InvalidInput("input", "must be a string or a non-empty list of items")
    out: list[dict[str, Any]] = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise InvalidInput(f"input[{i}]", "an input item must be a JSON object")
        kind = item.get("type", "message")
        if kind == "message":
            out.append({"role": item.get("role"), "content": item.get("content")})
        elif kind == "function_call":
            out.append({"role": "assistant", "content": None, "tool_calls": [{
                "id": item.get("call_id"), "type": "function",
                "function": {"name": item.get("name"), "arguments": item.get("arguments")}}]})
        elif kind == "function_call_output":
            output = item.get("output")
            out.append({"role": "tool", "tool_call_id": item.get("call_id"),
                        "content": output if isinstance(output, (str, list)) else str(output)})
        elif kind != "reasoning":
            raise InvalidInput(f"input[{i}].type", f"unsupported input item {kind!r}")
    if not out:
        raise InvalidInput("input", "holds no message")
    return out


def answer(ex: Exchange, result: Result) -> dict[str, Any]:
    """The Responses API object for the first answer (its id is the answer's node id)."""
    first = result.answers[0]
    output: list[dict[str, Any]] = []
    text = "".join(b["text"] for b in first.content if b["type"] == "text")
    if text or not any(b["type"] == "tool_use" for b in first.content):
        output.append(_message_item(ex, text, "completed"))
    for block in first.content:
        if block["type"] == "tool_use":
            output.append(_call_item(block, tool_call(block)["function"]["arguments"],
                                     "completed"))
    return response(ex, "completed" if ex.stop_reason(first) != "max_tokens" else "incomplete",
                    output, result)


def response(ex: Exchange, status: str, output: list[dict[str, Any]],
             result: Result | None) -> dict[str, Any]:
    """The response object (`result` None: still in progress)."""
    params = ex.params
    out: dict[str, Any] = {
        "id": ex.ids[0], "object": "response", "created_at": ex.created, "model": ex.model,
        "status": status, "output": output, "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "previous_response_id": ex.wire.get("previous"),
        "instructions": params.get("instructions"),
        "parallel_tool_calls": params.get("parallel_tool_calls", True),
        "tool_choice": params.get("tool_choice", "auto"), "tools": params.get("tools") or [],
        "temperature": params.get("temperature"), "top_p": params.get("top_p"),
        "usage": None,
    }
    if result is not None:
        u = usage(own_usage(result)[:1])
        out["usage"] = {"input_tokens": u["prompt_tokens"],
                        "input_tokens_details": {"cached_tokens": 0},
                        "output_tokens": u["completion_tokens"],
                        "output_tokens_details": {"reasoning_tokens": 0},
                        "total_tokens": u["total_tokens"]}
        out["loomdb"] = loomdb_part(ex, result.recorded)
    return out


def _message_item(ex: Exchange, text: str, status: str) -> dict[str, Any]:
    return {"type": "message", "id": ex.ids[0], "status": status, "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]
            if status == "completed" else []}


def _call_item(block: Mapping[str, Any], arguments: str, status: str) -> dict[str, Any]:
    return {"type": "function_call", "id": block["id"], "call_id": block["id"],
            "name": block["name"], "arguments": arguments, "status": status}


class Chunks:
    """The internal event stream as the Responses API's stream events (module
    docstring); thinking is not shown (no reasoning items are made)."""

    def __init__(self, ex: Exchange) -> None:
        self.ex = ex
        self.seq = 0
        self.items: list[dict[str, Any]] = []
        self.open: dict[str, Any] | None = None
        self.text = ""

    def event(self, kind: str, **fields: Any) -> dict[str, Any]:
        out = {"type": kind, "sequence_number": self.seq, **fields}
        self.seq += 1
        return out

    def take(self, event: Event) -> list[dict[str, Any]]:
        if isinstance(event, Begin):
            start = response(self.ex, "in_progress", [], None)
            return [self.event("response.created", response=start),
                    self.event("response.in_progress", response=start)]
        if isinstance(event, End):
            return self._end(event.result)
        if getattr(event, "choice", 0) != 0:
            return []  # one answer per response
        if isinstance(event, Open):
            return self._open(event.block)
        if isinstance(event, Delta) and self.open is not None:
            return self._delta(event)
        if isinstance(event, Close) and self.open is not None:
            return self._close()
        return []

    def _open(self, block: dict[str, Any]) -> list[dict[str, Any]]:
        index = len(self.items)
        self.text = ""
        if block["type"] == "text":
            self.open = _message_item(self.ex, "", "in_progress")
            self.open["id"] = f"{self.ex.ids[0]}_{index}" if index else self.ex.ids[0]
            self.items.append(self.open)
            part = {"type": "output_text", "text": "", "annotations": []}
            return [self.event("response.output_item.added", output_index=index,
                               item=dict(self.open)),
                    self.event("response.content_part.added", item_id=self.open["id"],
                               output_index=index, content_index=0, part=part)]
        if block["type"] == "tool_use":
            self.open = _call_item(block, "", "in_progress")
            self.items.append(self.open)
            return [self.event("response.output_item.added", output_index=index,
                               item=dict(self.open))]
        self.open = None
        return []

    def _delta(self, event: Delta) -> list[dict[str, Any]]:
        assert self.open is not None
        index = len(self.items) - 1
        if self.open["type"] == "message" and event.kind == "text":
            self.text += event.text
            return [self.event("response.output_text.delta", item_id=self.open["id"],
                               output_index=index, content_index=0, delta=event.text,
                               logprobs=[])]
        if self.open["type"] == "function_call" and event.kind == "input_json":
            self.text += event.text
            return [self.event("response.function_call_arguments.delta",
                               item_id=self.open["id"], output_index=index, delta=event.text)]
        return []

    def _close(self) -> list[dict[str, Any]]:
        assert self.open is not None
        item, index, self.open = self.open, len(self.items) - 1, None
        item["status"] = "completed"
        out = []
        if item["type"] == "message":
            part = {"type": "output_text", "text": self.text, "annotations": []}
            item["content"] = [part]
            out += [self.event("response.output_text.done", item_id=item["id"],
                               output_index=index, content_index=0, text=self.text,
                               logprobs=[]),
                    self.event("response.content_part.done", item_id=item["id"],
                               output_index=index, content_index=0, part=part)]
        else:
            item["arguments"] = self.text or "{}"
            out.append(self.event("response.function_call_arguments.done",
                                  item_id=item["id"], output_index=index,
                                  arguments=item["arguments"], name=item["name"]))
        out.append(self.event("response.output_item.done", output_index=index, item=item))
        return out

    def _end(self, result: Result) -> list[dict[str, Any]]:
        out = self._close() if self.open is not None else []
        if not self.items:  # an empty answer is one empty message, as `answer` gives it
            out += self._open({"type": "text"}) + self._close()
        stop = self.ex.stop_reason(result.answers[0])
        done = response(self.ex, "completed" if stop != "max_tokens" else "incomplete",
                        self.items, result)
        kind = "response.completed" if done["status"] == "completed" else "response.incomplete"
        return [*out, self.event(kind, response=done)]
