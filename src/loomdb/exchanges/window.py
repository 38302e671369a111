"""A request longer than its model's window, fitted before the model is asked.

Coding agents send far more than a small model holds: Claude Code's own system prompt
and tool definitions are ~20k tokens, and the local model's window is 2,048. When the
served alias names a `context_window`, what the model is sent (never what is recorded:
the node keeps the whole request) is fitted to it by the thread's budget strategy
(`providers.budget.fit`, `truncate-middle`: the system messages, the first user turn
and the newest turns that fit). What the strategy keeps whole is cut first when it
alone cannot fit: tool definitions larger than half the room are left out (the model
could not use them), and a system prompt larger than half the room keeps its head.

The yardstick is loomdb's token count (`loomdb.tokens`); a model's own tokenizer may
count more, so the room is `MARGIN` of the window less the answer's tokens (at most a
quarter of the window: a larger `max_tokens` is lowered to it). A request
that plainly fits (fewer characters than that room: a token is at least one
character) is not counted at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..providers.config import ModelSpec

#: the share of the window the fitted request may fill by loomdb's count
MARGIN = 0.6
#: the answer's room when the request names none
ANSWER_ROOM = 256
#: an answer may take at most this part of the window (1/4)
ANSWER_SHARE = 4


def fitted(ctx: dict[str, Any], spec: ModelSpec) -> dict[str, Any]:
    """`ctx` as the model is sent it (module docstring)."""
    window = spec.context_window
    if not window:
        return ctx
    options = ctx.get("options") or {}
    answer = int(options.get("max_tokens") or spec.params.get("max_tokens") or ANSWER_ROOM)
    if answer > window // ANSWER_SHARE:  # Claude Code asks for 32,000
        answer = window // ANSWER_SHARE
        options = {**options, "max_tokens": answer}
        ctx = {**ctx, "options": options}
    room = int(window * MARGIN) - answer
    if _chars(ctx) < room:
        return ctx
    from ..errors import InvalidInput
    from ..providers.budget import fit, tools_tokens
    from ..tokens import count_text

    if options.get("tools") and tools_tokens(options) > room // 2:
        options = {k: v for k, v in options.items() if k not in ("tools", "tool_choice")}
    share = room // (2 * max(1, sum(m["role"] == "system" for m in ctx["messages"])))
    messages = [_cut(m, share, count_text) if m["role"] == "system" else m
                for m in ctx["messages"]]
    try:
        return fit({**ctx, "messages": messages, "options": options}, room)[0]
    except InvalidInput:  # the newest turn alone is over: its head is what fits
        from ..tokens import count_messages

        newest = max(i for i, m in enumerate(messages) if m["role"] != "system"
                     ) if any(m["role"] != "system" for m in messages) else len(messages) - 1
        systems = count_messages([m for m in messages if m["role"] == "system"])
        most = max(8, (room - systems - tools_tokens(options)) * 2 // 3)
        messages[newest] = _cut(messages[newest], most, count_text)
        return fit({**ctx, "messages": messages, "options": options}, room)[0]


def _chars(ctx: Mapping[str, Any]) -> int:
    import json

    total = sum(len(b.get("text") or b.get("thinking") or "") if b["type"] in (
        "text", "thinking") else len(json.dumps(b, ensure_ascii=False))
        for m in ctx["messages"] for b in m["content"])
    tools = (ctx.get("options") or {}).get("tools")
    return total + (len(json.dumps(tools, ensure_ascii=False)) if tools else 0)


def _cut(message: Mapping[str, Any], most: int, count: Any) -> Mapping[str, Any]:
    """A message whose text is cut to about `most` tokens (its head kept)."""
    text = "".join(b.get("text", "") for b in message["content"] if b["type"] == "text")
    if count(text) <= most:
        return message
    keep = len(text)
    while keep > 16 and count(text[:keep]) > most:
        keep = keep * most // max(1, count(text[:keep])) * 9 // 10
    return {**message, "content": [{"type": "text", "text": text[:keep]}]}
