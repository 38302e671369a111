"""Fitting a context into a token budget: truncate-middle, rolling-window, stop."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loomdb.errors import InvalidInput
from loomdb.providers import fit
from loomdb.providers.budget import tools_tokens, units
from loomdb.tokens import count_message, count_messages


def msg(role: str, value: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": value}]}


def call(call_id: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "let me look that up"},
            {"type": "tool_use", "id": call_id, "name": "search", "input": {"q": "x " * 20}},
        ],
    }


def result(call_id: str) -> dict[str, Any]:
    return {
        "role": "tool",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": call_id,
                "content": [{"type": "text", "text": "found " * 30}],
            }
        ],
    }


def long_thread(turns: int = 10) -> dict[str, Any]:
    messages = [msg("system", "You are helpful."), msg("user", "First question, about cats.")]
    for i in range(turns):
        messages.append(msg("assistant", f"answer {i} " + "word " * 20))
        messages.append(msg("user", f"follow-up {i} " + "word " * 20))
    return {"messages": messages, "options": {"model": "m"}}


def texts(ctx: dict[str, Any]) -> list[str]:
    return [m["content"][0].get("text", "") for m in ctx["messages"]]


def cost(*messages: dict[str, Any]) -> int:
    return count_messages(list(messages))


class TestEveryStrategy:
    @pytest.mark.parametrize("strategy", ["truncate-middle", "rolling-window", "stop"])
    def test_a_context_within_budget_comes_back_whole_with_its_count(self, strategy):
        ctx = long_thread(2)
        fitted, used = fit(ctx, 10_000, strategy)
        assert fitted == ctx and used == count_messages(ctx["messages"])

    def test_the_input_context_is_not_changed(self):
        ctx = long_thread()
        before = copy.deepcopy(ctx)
        fit(ctx, 120, "truncate-middle")
        assert ctx == before

    def test_an_unknown_strategy_is_invalid_input(self):
        with pytest.raises(InvalidInput, match="truncate-middle, rolling-window, stop"):
            fit(long_thread(), 10, "summarize")

    def test_tool_definitions_count_against_the_budget(self):
        ctx = long_thread(1)
        tools = [
            {
                "name": "search",
                "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
            }
        ]
        with_tools = {**ctx, "options": {"model": "m", "tools": tools}}
        assert fit(with_tools, 10_000)[1] == fit(ctx, 10_000)[1] + tools_tokens(
            with_tools["options"]
        )


class TestStop:
    def test_over_budget_raises_saying_by_how_much(self):
        ctx = long_thread()
        total = count_messages(ctx["messages"])
        with pytest.raises(
            InvalidInput, match=f"holds {total} tokens, {total - 100} over the budget of 100"
        ):
            fit(ctx, 100, "stop")


class TestTruncateMiddle:
    def test_it_keeps_system_first_user_turn_and_the_latest_messages(self):
        ctx = long_thread()
        budget = cost(*ctx["messages"][:2], *ctx["messages"][-3:])
        fitted, used = fit(ctx, budget, "truncate-middle")
        assert fitted["messages"] == ctx["messages"][:2] + ctx["messages"][-3:]
        assert used == count_messages(fitted["messages"]) <= budget

    def test_the_options_are_kept(self):
        fitted, _ = fit(long_thread(), 150, "truncate-middle")
        assert fitted["options"] == {"model": "m"}

    def test_when_space_is_short_the_newest_message_wins_over_the_first_user_turn(self):
        ctx = long_thread()
        budget = cost(ctx["messages"][0], ctx["messages"][-1])
        fitted, _ = fit(ctx, budget, "truncate-middle")
        assert fitted["messages"] == [ctx["messages"][0], ctx["messages"][-1]]

    def test_when_even_system_and_newest_do_not_fit_it_says_so(self):
        ctx = long_thread()
        with pytest.raises(InvalidInput, match="cannot fit"):
            fit(ctx, cost(ctx["messages"][0]), "truncate-middle")


class TestRollingWindow:
    def test_it_keeps_system_and_the_newest_messages_that_fit(self):
        ctx = long_thread()
        budget = cost(ctx["messages"][0], *ctx["messages"][-4:])
        fitted, used = fit(ctx, budget, "rolling-window")
        assert fitted["messages"] == [ctx["messages"][0], *ctx["messages"][-4:]]
        assert used <= budget

    def test_the_first_user_turn_is_not_kept_for_its_own_sake(self):
        fitted, _ = fit(long_thread(), 150, "rolling-window")
        assert "First question, about cats." not in texts(fitted)

    def test_the_kept_tail_is_contiguous(self):
        ctx = long_thread()
        fitted, _ = fit(ctx, 200, "rolling-window")
        kept = fitted["messages"][1:]
        assert kept == ctx["messages"][len(ctx["messages"]) - len(kept) :]


class TestToolPairs:
    def span_thread(self) -> dict[str, Any]:
        messages = [
            msg("system", "sys"),
            msg("user", "start"),
            call("c1"),
            result("c1"),
            msg("assistant", "done"),
            msg("user", "next"),
        ]
        return {"messages": messages, "options": {}}

    def test_a_tool_use_and_its_results_form_one_unit(self):
        assert units(self.span_thread()["messages"]) == [[0], [1], [2, 3], [4], [5]]

    def test_a_result_that_fits_without_its_call_is_dropped_with_it(self):
        ctx = self.span_thread()
        m = ctx["messages"]
        budget = cost(m[0], m[3], m[4], m[5]) + 1  # room for the result, not for the call as well
        assert budget < cost(m[0], m[2], m[3], m[4], m[5])
        fitted, _ = fit(ctx, budget, "rolling-window")
        assert fitted["messages"] == [m[0], m[4], m[5]]

    def test_a_span_that_fits_is_kept_whole(self):
        ctx = self.span_thread()
        m = ctx["messages"]
        fitted, _ = fit(ctx, cost(m[0], *m[2:]), "rolling-window")
        assert fitted["messages"] == [m[0], *m[2:]]

    def test_several_result_messages_stay_with_their_call(self):
        two = {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "a", "name": "f", "input": {}},
                {"type": "tool_use", "id": "b", "name": "f", "input": {}},
            ],
        }
        res_a, res_b = result("a"), result("b")
        assert units([msg("user", "q"), two, res_a, res_b, msg("assistant", "ok")]) == [
            [0],
            [1, 2, 3],
            [4],
        ]


def random_thread(draw: Any) -> list[dict[str, Any]]:
    messages = [msg("system", "rules " * draw(st.integers(0, 5)))]
    for i in range(draw(st.integers(1, 8))):
        if draw(st.booleans()):
            messages += [call(f"c{i}"), result(f"c{i}")]
        messages.append(
            msg(draw(st.sampled_from(["user", "assistant"])), "w " * draw(st.integers(1, 30)))
        )
    return messages


@st.composite
def threads_and_budgets(draw: Any) -> tuple[list[dict[str, Any]], int]:
    messages = random_thread(draw)
    need = count_messages([messages[0], messages[-1]])
    return messages, draw(st.integers(need, count_messages(messages) + 10))


class TestProperties:
    @settings(max_examples=60, deadline=None)
    @given(threads_and_budgets(), st.sampled_from(["truncate-middle", "rolling-window"]))
    def test_the_result_fits_keeps_order_and_never_orphans_a_tool_result(self, case, strategy):
        messages, budget = case
        fitted, used = fit({"messages": messages, "options": {}}, budget, strategy)
        kept = fitted["messages"]
        assert used == count_messages(kept) <= budget
        positions = [next(i for i, x in enumerate(messages) if x is m) for m in kept]
        assert positions == sorted(positions)
        calls = {b["id"] for m in kept for b in m["content"] if b["type"] == "tool_use"}
        answered = {
            b["tool_use_id"] for m in kept for b in m["content"] if b["type"] == "tool_result"
        }
        assert answered == calls
        assert kept[0] is messages[0] and kept[-1] is messages[-1]
        assert sum(count_message(m) for m in kept) + count_messages([]) == used
