"""The official `anthropic` SDK (sync and async) against a live gateway: messages,
streaming with `messages.stream`, a tools round trip, `count_tokens`, models and
errors, recorded as the OpenAI routes record (one path per conversation, a re-ask a
sibling, the raw request and response kept, nothing written on failure). The local
model answers; `upstream` is an `anthropic` alias in front of the loopback stand-in
for Anthropic's API (anthropic_stub.py), loomdb as a recording proxy. On the main this
was written against, each call was a 404 `{"detail":"Not Found"}`."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import pytest
from anthropic_stub import SIGNATURE, Stub, running

import loomdb
from conftest import serve
from loomdb import Loom

SHORT = 6
WEATHER = {"name": "weather", "description": "The weather in a city",
           "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                            "required": ["city"]}}

#: one module, one worker: its live gateway is started once
pytestmark = pytest.mark.xdist_group("anthropic-sdk")


class Live:
    def __init__(self, url: str, loom: Loom, stub: Stub) -> None:
        self.url, self.loom, self.stub = url, loom, stub

    def client(self) -> anthropic.Anthropic:
        return anthropic.Anthropic(base_url=self.url, api_key="unused", max_retries=0,
                                   timeout=120)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, local_model: None) -> Iterator[Live]:
    from loomdb.front import Runtime
    from loomdb.gateway import create_gateway_app
    from loomdb.providers.config import parse_config
    from loomdb.settings import Settings

    for stub in running():
        config = parse_config({
            "models": {"upstream": {"provider": "anthropic", "model": "claude-stub-1",
                                    "base_url": stub.url, "api_key_env": "STUB_KEY",
                                    "max_retries": 0}},
            "server": {"models": ["local", "upstream"], "names": {"claude-*": "local"}}})
        db = str(tmp_path_factory.mktemp("anthropic") / "store")
        with loomdb.open(db, settings=Settings()) as lm:
            runtime = Runtime(config=config, settings=Settings(environ={"STUB_KEY": "k"}))
            for base in serve(create_gateway_app(lm, runtime=runtime)):
                yield Live(base, lm, stub)


def path_of(live: Live, node: str) -> list[Any]:
    return live.loom.nodes(live.loom.path(node))


def test_messages_record_a_path_and_a_re_ask_is_a_sibling(live: Live) -> None:
    client = live.client()
    system = [{"type": "text", "text": "Be brief."},
              {"type": "text", "text": "Answer in English.", "cache_control": {"type": "ephemeral"}}]
    first = client.messages.create(model="local", max_tokens=SHORT, system=system,
                                   messages=[{"role": "user", "content": "Hi"}],
                                   extra_body={"temperature": 0.5},
                                   metadata={"user_id": "u1"}, stop_sequences=["\n\n"])
    path = path_of(live, first.id)
    assert [n.role for n in path] == ["system", "user", "assistant"]
    assert path[0].content == [{"type": "text", "text": "Be brief."},
                               {"type": "text", "text": "Answer in English."}]
    assert path[-1].content == [{"type": "text", "text": first.content[0].text}]
    assert first.model == "local" and first.type == "message" and first.usage.output_tokens > 0
    gen = live.loom.backend.provenance.get_generation(path[-1].provenance["generation"])
    request = json.loads(gen["request"])["gateway"]
    assert request["temperature"] == 0.5 and request["metadata"] == {"user_id": "u1"}
    assert json.loads(gen["provider_request"])["stop"] == ["\n\n"]
    # the same request again: a sibling answer; the conversation going on: one more turn
    again = client.messages.create(model="local", max_tokens=SHORT, system=system,
                                   messages=[{"role": "user", "content": "Hi"}])
    assert live.loom.siblings(again.id) == [first.id]
    more = client.messages.create(model="local", max_tokens=SHORT, system=system, messages=[
        {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
        {"role": "assistant", "content": first.content[0].text},
        {"role": "user", "content": "And?", }])
    assert more.loomdb["written"] == 1  # type: ignore[attr-defined]
    assert live.loom.path(more.id)[:3] == live.loom.path(first.id)


def test_a_client_model_name_maps_by_pattern_and_an_unknown_one_is_not_found(
        live: Live) -> None:
    client = live.client()
    mapped = client.messages.create(model="claude-opus-4-1", max_tokens=SHORT,
                                    messages=[{"role": "user", "content": "Hello"}])
    assert mapped.model == "claude-opus-4-1"
    assert live.loom.node(mapped.id).provenance["alias"] == "local"
    before = len(live.loom.trees())
    with pytest.raises(anthropic.NotFoundError) as caught:
        client.messages.create(model="gpt-9", max_tokens=SHORT,
                               messages=[{"role": "user", "content": "Hello"}])
    error = caught.value.body["error"]  # type: ignore[index]
    assert error["type"] == "not_found_error" and "local, upstream" in error["message"]
    assert len(live.loom.trees()) == before


def test_streaming_sends_anthropics_event_sequence_and_stores_the_text(live: Live) -> None:
    body = {"model": "local", "max_tokens": SHORT, "stream": True,
            "messages": [{"role": "user", "content": "Count to three."}]}
    with httpx.stream("POST", live.url + "/v1/messages?beta=true", json=body, timeout=120,
                      headers={"anthropic-version": "2023-06-01",
                               "anthropic-beta": "fine-grained-tool-streaming-2025-05-14"}) as r:
        lines = [line for line in r.iter_lines() if line.startswith("event: ")]
    kinds = [line[7:] for line in lines]
    assert kinds[:4] == ["message_start", "ping", "content_block_start", "content_block_delta"]
    assert kinds[-4:] == ["content_block_delta", "content_block_stop", "message_delta",
                          "message_stop"]
    with live.client().messages.stream(**{k: v for k, v in body.items() if k != "stream"}
                                       ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    node = live.loom.node(final.id)
    assert node.content == [{"type": "text", "text": text}] and final.content[0].text == text


def test_tools_round_trip_with_an_error_result(live: Live) -> None:
    client = live.client()
    asked = [{"role": "user", "content": "Weather in Paris?"}]
    call = client.messages.create(model="local", max_tokens=40, messages=asked,
                                  tools=[WEATHER], tool_choice={"type": "any"})
    assert call.stop_reason == "tool_use" and call.content[-1].type == "tool_use"
    use = call.content[-1]
    with client.messages.stream(model="local", max_tokens=40, messages=asked, tools=[WEATHER],
                                tool_choice={"type": "tool", "name": "weather"}) as stream:
        streamed = stream.get_final_message()
    assert streamed.stop_reason == "tool_use" and streamed.content[-1].name == "weather"
    assert live.loom.node(streamed.id).content == [
        {"type": "tool_use", "id": streamed.content[-1].id, "name": "weather",
         "input": streamed.content[-1].input}]
    answer = client.messages.create(model="local", max_tokens=SHORT, tools=[WEATHER], messages=[
        *asked, {"role": "assistant", "content": [use.model_dump()]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                      "content": "the service is down", "is_error": True}]}])
    path = path_of(live, answer.id)
    assert path[1].id == call.id  # the call, re-sent as the SDK gives it, is the stored node
    assert path[2].role == "tool" and path[2].content == [
        {"type": "tool_result", "tool_use_id": use.id, "is_error": True,
         "content": [{"type": "text", "text": "the service is down"}]}]
    none = client.messages.create(model="local", max_tokens=SHORT, messages=asked,
                                  tools=[WEATHER], tool_choice={"type": "none"})
    assert none.content[0].type == "text"


def test_images_and_documents_are_stored_as_blobs(live: Live) -> None:
    data = _png()
    pdf = b"%PDF-1.4 a tiny document"
    # asked of the upstream stand-in: what is proved is what the gateway stores (and
    # that the upstream gets the media as the client sent them)
    content = [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": base64.b64encode(data).decode()}},
        {"type": "document", "title": "notes.pdf",
         "source": {"type": "base64", "media_type": "application/pdf",
                    "data": base64.b64encode(pdf).decode()}},
        {"type": "text", "text": "What is this?"}]
    reply = live.client().messages.create(model="upstream", max_tokens=SHORT,
                                          messages=[{"role": "user", "content": content}])
    assert live.stub.requests[-1]["messages"] == [{"role": "user", "content": content}]
    user = path_of(live, reply.id)[0]
    image, document, _ = user.content
    assert image["type"] == "image" and live.loom.blob(image["ref"]) == data
    assert document["name"] == "notes.pdf" and live.loom.blob(document["ref"]) == pdf


def _png() -> bytes:
    """A 1x1 PNG made here (signature, IHDR, IDAT, IEND with their CRCs)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data)))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b""))


def test_count_tokens_and_models_in_anthropics_shape(live: Live) -> None:
    client = live.client()
    small = client.messages.count_tokens(model="local",
                                         messages=[{"role": "user", "content": "Hi"}])
    big = client.messages.count_tokens(model="local", tools=[WEATHER], system="Be brief.",
                                       messages=[{"role": "user", "content": "Hi " * 50}])
    assert 0 < small.input_tokens < big.input_tokens
    models = client.models.list()
    assert [m.id for m in models.data] == ["local", "upstream"]
    assert all(m.type == "model" for m in models.data)
    plain = httpx.get(live.url + "/v1/models").json()  # without anthropic-version: OpenAI's
    assert plain["object"] == "list"


def test_errors_come_in_anthropics_shape_from_the_one_mapper(live: Live) -> None:
    client = live.client()
    before = len(live.loom.trees())
    with pytest.raises(anthropic.BadRequestError) as bad:
        client.messages.create(model="local", max_tokens=SHORT,
                               messages=[{"role": "wizard", "content": "x"}])
    assert bad.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]
    assert bad.value.body["type"] == "error"  # type: ignore[index]
    huge = "x" * (live.loom.max_content_bytes + 10)
    for stream in (False, True):
        r = httpx.post(live.url + "/v1/messages", timeout=60, json={
            "model": "local", "max_tokens": SHORT, "stream": stream,
            "messages": [{"role": "user", "content": huge}]})
        assert r.status_code == 413, r.text
        assert r.json()["error"]["type"] == "request_too_large"
    with pytest.raises(anthropic.NotFoundError):
        client.messages.create(model="nope", max_tokens=SHORT,
                               messages=[{"role": "user", "content": "x"}])
    assert len(live.loom.trees()) == before


def test_the_async_client_messages_and_stream(live: Live) -> None:
    async def run() -> tuple[Any, Any]:
        client = anthropic.AsyncAnthropic(base_url=live.url, api_key="unused", max_retries=0,
                                          timeout=120)
        one = await client.messages.create(model="local", max_tokens=SHORT,
                                           messages=[{"role": "user", "content": "Async hi"}])
        async with client.messages.stream(model="local", max_tokens=SHORT, messages=[
                {"role": "user", "content": "Async hi"}]) as stream:
            two = await stream.get_final_message()
        return one, two

    one, two = asyncio.run(run())
    assert live.loom.siblings(two.id) == [one.id]


def test_the_recording_proxy_forwards_what_the_client_sent(live: Live) -> None:
    client = live.client()
    sent = {"model": "upstream", "max_tokens": 100,
            "system": [{"type": "text", "text": "You are a stub's client.",
                        "cache_control": {"type": "ephemeral"}}],
            "thinking": {"type": "enabled", "budget_tokens": 50},
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "Question", "cache_control": {"type": "ephemeral"}}]}]}
    first = client.messages.create(**sent, extra_headers={"anthropic-beta": "interleaved-x"})
    upstream = live.stub.requests[-1]
    assert upstream["system"] == sent["system"] and upstream["messages"] == sent["messages"]
    assert upstream["thinking"] == sent["thinking"] and upstream["model"] == "claude-stub-1"
    assert live.stub.headers[-1]["anthropic-beta"] == "interleaved-x"
    node = live.loom.node(first.id)
    assert node.content[0] == {"type": "thinking", "thinking": first.content[0].thinking,
                               "signature": SIGNATURE}
    # re-sent with its signed thinking, the answer is the stored node; streamed, the
    # thinking, its signature and the text come through in order
    more = [*sent["messages"], {"role": "assistant", "content": [b.model_dump(
        exclude_none=True) for b in first.content]}, {"role": "user", "content": "Next"}]
    with client.messages.stream(**{**sent, "messages": more}) as stream:
        kinds = [e.type for e in stream]
        final = stream.get_final_message()
    assert live.loom.path(final.id)[:3] == live.loom.path(first.id)
    assert "thinking" in kinds and "signature" in kinds and "text" in kinds
    assert final.content[0].signature == SIGNATURE
    assert live.loom.node(final.id).content == [b.model_dump(exclude_none=True, include={
        "type", "thinking", "signature", "text"}) for b in final.content]


def test_a_failure_mid_stream_is_an_error_event_and_nothing_is_written(live: Live) -> None:
    before = len(live.loom.trees())
    body = {"model": "upstream", "max_tokens": 50, "stream": True,
            "messages": [{"role": "user", "content": "BREAK please"}]}
    with httpx.stream("POST", live.url + "/v1/messages", json=body, timeout=60) as r:
        assert r.status_code == 200
        events = [line[7:] for line in r.iter_lines() if line.startswith("event: ")]
    assert events[0] == "message_start" and events[-1] == "error"
    assert "message_stop" not in events
    with pytest.raises(anthropic.APIStatusError):
        with live.client().messages.stream(**{k: v for k, v in body.items()
                                              if k != "stream"}) as stream:
            stream.get_final_message()
    assert len(live.loom.trees()) == before
