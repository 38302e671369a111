"""The real `openai` SDK against a live gateway with the local model behind it (and, where
the model's words do not matter, a model that answers at once)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import Live, serve
from loomdb import Loom
from loomdb.providers.base import Completion

SHORT = {"max_tokens": 3}


def ask(client: Any, messages: list[dict[str, Any]], **extra: Any) -> Any:
    return client.chat.completions.create(model="local", messages=messages, **{**SHORT, **extra})


def texts(live: Live, head: str) -> list[tuple[str, str]]:
    nodes = live.loom.nodes(live.loom.path(head))
    return [(n.role, "".join(b.get("text", "") for b in n.content)) for n in nodes]


class Instant:
    """The model, where what it says does not matter: a short answer naming the turn
    (the number of user messages it was sent), at once."""

    def complete(self, ctx: Any, *, n: int = 1, **_: Any) -> list[Completion]:
        turn = sum(m["role"] == "user" for m in ctx["messages"])
        text = f"Colour number {turn}."
        return [Completion(content=[{"type": "text", "text": text}], stop_reason="end_turn",
                           usage={"input_tokens": 1, "output_tokens": 1}, model="instant",
                           provider="local", provider_request={"messages": ctx["messages"]},
                           raw_response={"text": text}, latency_ms=0, alias="local")
                for _ in range(n)]


@pytest.fixture
def instant(loom: Loom) -> Iterator[Live]:
    """A live gateway whose `local` alias is the Instant model."""
    from loomdb.gateway import create_gateway_app

    for base in serve(create_gateway_app(loom, clients=lambda _spec: Instant())):
        yield Live(base + "/v1", loom)


def test_twenty_turns_resent_whole_make_one_path_of_forty(instant: Live) -> None:
    """What is proved is the recording (each turn re-sends the whole history, as the SDK
    gives it back): the model answers at once."""
    live = instant
    client = live.client()
    history: list[dict[str, Any]] = []
    for turn in range(20):
        history.append({"role": "user", "content": f"Turn {turn}: name a colour."})
        reply = ask(client, history, seed=turn)
        message = reply.choices[0].message
        # chat apps send the answer back as they got it: plain, or the SDK's whole object
        history.append(message.model_dump(exclude_none=True) if turn % 2
                       else {"role": "assistant", "content": message.content})
    tree = live.loom.tree(reply.loomdb["tree"])  # type: ignore[attr-defined]
    assert tree.nodes == 40
    path = live.loom.path(reply.id)
    assert len(path) == 40 and path[-1] == reply.id
    assert texts(live, reply.id) == [(m["role"], m["content"]) for m in history]
    assert len(live.loom.trees()) == 1


def test_answer_node_keeps_provenance(live: Live) -> None:
    reply = ask(live.client(), [{"role": "user", "content": "Hello there"}], temperature=0.5)
    node = live.loom.node(reply.id)
    assert node.role == "assistant" and node.source == "agent" and node.author == "local"
    prov = node.provenance or {}
    assert prov["via"] == "gateway" and prov["usage"]["output_tokens"] == reply.usage.completion_tokens
    assert prov["latency_ms"] >= 0 and prov["response_hash"].startswith("sha256:")
    gen = live.loom.backend.provenance.get_generation(prov["generation"])
    assert gen is not None
    request = json.loads(gen["request"])
    assert request["gateway"]["temperature"] == 0.5
    assert request["messages"] == {"through": node.parent, "count": 1}
    raw = json.loads(gen["raw_response"])
    assert raw["choices"][0]["message"]["content"] == reply.choices[0].message.content
    assert live.loom.verify().ok


def test_regenerate_is_a_sibling(live: Live) -> None:
    client = live.client()
    history = [{"role": "user", "content": "Tell me a fact."}]
    first = ask(client, history)
    history += [{"role": "assistant", "content": first.choices[0].message.content},
                {"role": "user", "content": "Another one."}]
    second = ask(client, history)
    again = ask(client, history)  # the same request: a retry
    assert live.loom.siblings(again.id) == [second.id]
    assert live.loom.path(again.id)[:-1] == live.loom.path(second.id)[:-1]
    assert live.loom.tree(again.loomdb["tree"]).nodes == 5  # type: ignore[attr-defined]


def test_n_choices_are_sibling_alternatives(live: Live) -> None:
    reply = ask(live.client(), [{"role": "user", "content": "Pick a number."}], n=2)
    ids = reply.loomdb["nodes"]  # type: ignore[attr-defined]
    assert ids[0] == reply.id and len(ids) == 2
    assert live.loom.siblings(ids[0]) == [ids[1]]
    for choice, node_id in zip(reply.choices, ids, strict=True):
        assert texts(live, node_id)[-1] == ("assistant", choice.message.content)


def test_edited_earlier_message_is_a_version_with_the_rest_reattached(instant: Live) -> None:
    live = instant  # what is proved is the recording: the model answers at once
    client = live.client()
    history: list[dict[str, Any]] = []
    for turn in range(3):
        history.append({"role": "user", "content": f"Question {turn}?"})
        reply = ask(client, history)
        history.append({"role": "assistant", "content": reply.choices[0].message.content})
    old_path = live.loom.path(reply.id)
    edited = [dict(m) for m in history]
    edited[2] = {"role": "user", "content": "Question one, rephrased?"}
    edited.append({"role": "user", "content": "And now?"})
    reply = ask(client, edited)
    assert reply.loomdb["written"] == 2  # type: ignore[attr-defined]  # the version + the new question
    path = live.loom.path(reply.id)
    version = live.loom.node(path[2])
    assert version.edited_from == old_path[2] and version.slot == old_path[2]
    assert path[:2] == old_path[:2] and path[3:6] == old_path[3:6]  # reattached, not copied
    assert texts(live, reply.id)[:-1] == [(m["role"], m["content"]) for m in edited]
    assert live.loom.tree(reply.loomdb["tree"]).nodes == 6 + 3  # type: ignore[attr-defined]
    # the old path still reads as it was: node ids are immutable addresses
    assert live.loom.path(old_path[-1]) == old_path
    # and the same edited history again continues through the version, not a copy
    edited.append({"role": "assistant", "content": reply.choices[0].message.content})
    edited.append({"role": "user", "content": "Once more?"})
    third = ask(client, edited)
    assert third.loomdb["written"] == 1  # type: ignore[attr-defined]
    assert live.loom.path(third.id)[:-2] == path


def test_a_different_last_message_branches_as_a_sibling(live: Live) -> None:
    client = live.client()
    first = ask(client, [{"role": "user", "content": "Start."}])
    base = [{"role": "user", "content": "Start."},
            {"role": "assistant", "content": first.choices[0].message.content}]
    one = ask(client, base + [{"role": "user", "content": "Left?"}])
    two = ask(client, base + [{"role": "user", "content": "Right?"}])
    left, right = live.loom.path(one.id), live.loom.path(two.id)
    assert left[:2] == right[:2] and left[2] != right[2]
    assert live.loom.siblings(right[2]) == [left[2]]


def test_streaming_chunks_are_the_stored_text(live: Live) -> None:
    stream = live.client().chat.completions.create(
        model="local", messages=[{"role": "user", "content": "Count to five."}],
        stream=True, max_tokens=12, stream_options={"include_usage": True})
    chunks = list(stream)
    ids = {c.id for c in chunks}
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert len(ids) == 1
    node = live.loom.node(ids.pop())
    assert node.content == [{"type": "text", "text": text}]
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0
    finished = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finished[0].choices[0].finish_reason in ("stop", "length")


def test_tool_calls_are_stored_as_blocks_both_ways(instant: Live) -> None:
    live = instant  # what is proved is how the request's calls are stored and matched
    history = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "18C and sunny"},
    ]
    reply = ask(live.client(), history, tools=[{"type": "function", "function": {
        "name": "weather", "parameters": {"type": "object", "properties": {}}}}])
    nodes = live.loom.nodes(live.loom.path(reply.id))
    assert nodes[1].content == [{"type": "tool_use", "id": "call_1", "name": "weather",
                                 "input": {"city": "Paris"}}]
    assert nodes[2].role == "tool" and nodes[2].content == [
        {"type": "tool_result", "tool_use_id": "call_1",
         "content": [{"type": "text", "text": "18C and sunny"}]}]
    # re-sent as the SDK serialises it, the tool exchange matches the stored nodes
    history += [{"role": "assistant", "content": reply.choices[0].message.content},
                {"role": "user", "content": "Thanks"}]
    again = ask(live.client(), history)
    assert again.loomdb["written"] == 1  # type: ignore[attr-defined]


def test_session_header_moves_the_named_session(live: Live) -> None:
    client = live.client(**{"X-Loomdb-Session": "work"})
    first = ask(client, [{"role": "user", "content": "Hi"}])
    assert live.loom.ref("work").node == first.id
    history = [{"role": "user", "content": "Hi"},
               {"role": "assistant", "content": first.choices[0].message.content},
               {"role": "user", "content": "More"}]
    second = ask(client, history)
    assert live.loom.ref("work").node == second.id
    assert [m.new for m in live.loom.ref_log("work")][-1] == second.id
    import openai

    with pytest.raises(openai.BadRequestError) as caught:
        ask(client, [{"role": "user", "content": "Unrelated"}])
    assert "session 'work'" in caught.value.message
    assert live.loom.tree(second.loomdb["tree"]).nodes == 4  # type: ignore[attr-defined]


def test_models_are_listed(live: Live) -> None:
    assert "local" in [m.id for m in live.client().models.list()]


def test_bad_requests_get_openai_errors_and_write_nothing(live: Live) -> None:
    import openai

    client = live.client()
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="nope", messages=[{"role": "user", "content": "x"}])
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="local", messages=[{"role": "wizard", "content": "x"}])
    assert caught.value.body["param"] == "messages[0].role"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="local", messages=[])
    assert live.loom.trees() == []
