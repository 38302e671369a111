"""Fitting a normalized context into a token budget by dropping whole messages.

`fit(ctx, budget, strategy)` returns a new context (the input is not changed) and its
token count. Nothing is ever rewritten or summarized here (that is `compact`'s job):
messages are kept or dropped whole, in their order. The count covers the messages and
the tool definitions in `options["tools"]`, since both fill the model's window.

Strategies:

- `truncate-middle`: keep the system message(s), the first user turn and as many of
  the latest messages as fit; drop the middle;
- `rolling-window`: keep the system message(s) and the newest messages that fit;
- `stop`: change nothing; raise InvalidInput saying how far over the budget it is.

Rules every strategy keeps:

- a tool span is one unit: an assistant message holding `tool_use` blocks and the
  messages right after it holding their `tool_result` blocks are kept or dropped
  together, never split;
- what is kept of the tail is contiguous: the walk from the newest message back stops
  at the first unit that does not fit;
- priority when space is short: system messages, then the newest unit (a context
  without the latest message would answer the wrong question), then (truncate-middle)
  the first user turn, then older messages. When the system messages and the newest
  unit alone exceed the budget, InvalidInput says so.

`count` is any function of a message list that is additive up to a constant
(`loomdb.tokens.count_messages`, the default, is).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import InvalidInput
from ..tokens import count_messages, count_text

Message = Mapping[str, Any]
Counter = Callable[[list[Message]], int]
STRATEGIES = ("truncate-middle", "rolling-window", "stop")


def _has(message: Message, kind: str) -> bool:
    return any(block["type"] == kind for block in message["content"])


def units(messages: Sequence[Message]) -> list[list[int]]:
    """Message indices grouped into units that are kept or dropped whole (tool spans)."""
    groups: list[list[int]] = []
    for i, message in enumerate(messages):
        joins_span = (
            groups
            and _has(message, "tool_result")
            and message["role"] != "assistant"
            and _has(messages[groups[-1][0]], "tool_use")
        )
        if joins_span:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def tools_tokens(options: Mapping[str, Any]) -> int:
    """Tokens the tool definitions cost (their JSON)."""
    tools = options.get("tools")
    return count_text(json.dumps(tools, ensure_ascii=False, sort_keys=True)) if tools else 0


class _Plan:
    """Units with their costs, and the set being kept."""

    def __init__(self, messages: Sequence[Message], count: Counter) -> None:
        self.messages = messages
        self.base = count([])
        costs = [count([m]) - self.base for m in messages]
        self.units = units(messages)
        self.cost = [sum(costs[i] for i in unit) for unit in self.units]
        self.kept: set[int] = set()
        self.used = self.base

    def is_system(self, u: int) -> bool:
        return all(self.messages[i]["role"] == "system" for i in self.units[u])

    def keep(self, u: int) -> None:
        self.kept.add(u)
        self.used += self.cost[u]

    def fits(self, u: int, budget: int) -> bool:
        return self.used + self.cost[u] <= budget

    def result(self) -> list[Message]:
        return [self.messages[i] for u in sorted(self.kept) for i in self.units[u]]


def _first_user(plan: _Plan) -> int | None:
    for u, unit in enumerate(plan.units):
        if any(plan.messages[i]["role"] == "user" for i in unit):
            return u
    return None


def _drop(plan: _Plan, budget: int, strategy: str) -> list[Message]:
    turns = [u for u in range(len(plan.units)) if not plan.is_system(u)]
    for u in range(len(plan.units)):
        if plan.is_system(u):
            plan.keep(u)
    if not turns:
        return plan.result()
    newest = turns[-1]
    if not plan.fits(newest, budget):
        raise InvalidInput(
            "context",
            f"cannot fit: the system messages and the newest message need "
            f"{plan.used + plan.cost[newest]} tokens, over the budget of {budget}",
        )
    plan.keep(newest)
    first = _first_user(plan) if strategy == "truncate-middle" else None
    if first is not None and first != newest and plan.fits(first, budget):
        plan.keep(first)
    for u in reversed(turns[:-1]):
        if u in plan.kept or not plan.fits(u, budget):
            break
        plan.keep(u)
    return plan.result()


def fit(
    ctx: Mapping[str, Any],
    budget: int,
    strategy: str = "truncate-middle",
    count: Counter = count_messages,
) -> tuple[dict[str, Any], int]:
    """The context cut to `budget` tokens by `strategy`, and its token count."""
    if strategy not in STRATEGIES:
        raise InvalidInput("strategy", f"must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    messages = list(ctx["messages"])
    extra = tools_tokens(ctx.get("options") or {})
    total = count(messages) + extra
    if total <= budget:
        return {**ctx, "messages": messages}, total
    if strategy == "stop":
        raise InvalidInput(
            "context",
            f"the context holds {total} tokens, {total - budget} over the budget of {budget}",
        )
    kept = _drop(_Plan(messages, count), budget - extra, strategy)
    return {**ctx, "messages": kept}, count(kept) + extra
