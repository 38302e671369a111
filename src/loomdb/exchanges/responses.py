"""`POST /v1/responses`: OpenAI's Responses API over the same recording.

`previous_response_id` is a node id (every response id is one), looked up as that exact
id and nothing else (never a ref name, a prefix or `~N`): the new input is appended after
that node, whatever wrote it, and the model sees that node's context (the path with
loomdb's rules: versions, exclusions, compaction) plus the input. The gateway serves
stores without users only (`front.gateway`), so every node is the operator's.
Without it, the input is a whole conversation, matched like a chat request, with
`instructions` as its leading system message. Input items: a string, messages (text
and image parts), `function_call` and `function_call_output` (tool_use and
tool_result blocks). Only whole (non-streamed) responses are served.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, NotFound
from ..headish import Position
from . import convert, paths
from .exchange import loomdb_part

if TYPE_CHECKING:
    from ..providers.base import Completion
    from .exchange import Exchange, Gateway
    from .record import Recorded

_PASSED = ("model", "temperature", "top_p", "tools", "tool_choice", "parallel_tool_calls",
           "user", "seed", "top_logprobs")


def respond(gw: Gateway, body: Any, session: str | None) -> dict[str, Any]:
    """One Responses API call, recorded; the response object it returns."""
    if not isinstance(body, dict):
        raise InvalidInput("body", "must be a JSON object")
    if body.get("stream"):
        raise InvalidInput("stream", "streamed responses are served on /v1/chat/completions")
    chat = {k: body[k] for k in _PASSED if body.get(k) is not None}
    if body.get("max_output_tokens") is not None:
        chat["max_tokens"] = body["max_output_tokens"]
    items = chat_messages(body.get("input"))
    previous = body.get("previous_response_id")
    if previous is None:
        if isinstance(body.get("instructions"), str):
            items.insert(0, {"role": "system", "content": body["instructions"]})
        ex = gw.exchange_of(chat, convert.messages(items, "input"))
        after = None
    else:
        ex, after = _continued(gw, chat, str(previous), items, body.get("instructions"))
    answers = gw.complete(ex)
    return response_object(ex, answers, gw.record(ex, answers, session, after), previous)


def _continued(
    gw: Gateway, chat: dict[str, Any], previous: str, items: list[dict[str, Any]],
    instructions: Any,
) -> tuple[Exchange, paths.Hit]:
    """The path up to `previous` plus the new input; the model sees the path's context."""
    loom = gw.loom
    found = loom.nodes([previous])
    if not found:
        raise NotFound("response", previous[:80])
    node = found[0]
    at = Position(node.id, node.tree, None, None, {})
    path = loom.nodes(loom.path(at))
    new = convert.messages(items, "input")
    known = convert.Messages(
        [n.role for n in path], [{"role": n.role, "content": n.content} for n in path],
        [convert.key_of(n.role, convert.resent(n.content) if n.role == "assistant" else n.content)
         for n in path])
    sent = loom.context(at)["messages"] + new.sent()
    if isinstance(instructions, str):
        sent.insert(0, {"role": "system", "content": [{"type": "text", "text": instructions}]})
    ex = gw.exchange_of(chat, known + new, sent)
    return ex, paths.Hit(len(path) - 1, node.id, node.tree)


def chat_messages(raw: Any) -> list[dict[str, Any]]:
    """Responses input -> chat messages (what `convert.messages` reads)."""
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
            out.append({"role": "tool", "tool_call_id": item.get("call_id"),
                        "content": item.get("output")})
        else:
            raise InvalidInput(f"input[{i}].type", f"unsupported input item {kind!r}")
    return out


def response_object(
    ex: Exchange, answers: list[Completion], rec: Recorded, previous: Any
) -> dict[str, Any]:
    """The Responses API object for the first answer (its id is the answer's node id)."""
    answer = answers[0]
    output: list[dict[str, Any]] = []
    text = "".join(b["text"] for b in answer.content if b["type"] == "text")
    if text or not any(b["type"] == "tool_use" for b in answer.content):
        output.append({"type": "message", "id": ex.ids[0], "status": "completed",
                       "role": "assistant",
                       "content": [{"type": "output_text", "text": text, "annotations": []}]})
    for block in answer.content:
        if block["type"] == "tool_use":
            call = convert.tool_call(block)
            output.append({"type": "function_call", "id": block["id"], "call_id": block["id"],
                           "name": block["name"], "arguments": call["function"]["arguments"],
                           "status": "completed"})
    usage = convert.usage([answer.usage])
    return {
        "id": ex.ids[0], "object": "response", "created_at": ex.created, "model": ex.model,
        "status": "completed" if answer.stop_reason != "max_tokens" else "incomplete",
        "incomplete_details": ({"reason": "max_output_tokens"}
                               if answer.stop_reason == "max_tokens" else None),
        "output": output, "previous_response_id": previous, "error": None,
        "instructions": None, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        "usage": {"input_tokens": usage["prompt_tokens"],
                  "output_tokens": usage["completion_tokens"],
                  "total_tokens": usage["total_tokens"]},
        "loomdb": loomdb_part(ex, rec),
    }
