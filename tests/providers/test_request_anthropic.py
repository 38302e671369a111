"""Anthropic Messages bodies, checked against the anthropic SDK's types."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from loomdb.errors import InvalidInput
from loomdb.providers import anthropic_request
from loomdb.providers.requests_anthropic import DEFAULT_MAX_TOKENS, LEAD_IN, MAX_CACHE_BREAKPOINTS

EPHEMERAL = {"type": "ephemeral"}


def msg(role: str, *blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"role": role, "content": list(blocks), **extra}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def ctx(*messages: dict[str, Any], **options: Any) -> dict[str, Any]:
    return {"messages": list(messages), "options": {"model": "claude-test", **options}}


def tool_span() -> list[dict[str, Any]]:
    return [
        msg("user", text("Weather in Oslo?")),
        msg(
            "assistant",
            text("Checking."),
            {"type": "tool_use", "id": "tu_1", "name": "weather", "input": {"city": "Oslo"}},
        ),
        msg(
            "tool",
            {
                "type": "tool_result",
                "tool_use_id": "tu_1",
                "content": [text("-3C")],
                "is_error": False,
            },
        ),
        msg("assistant", text("It is -3C.")),
    ]


def every_block(blobs: Any, png: bytes) -> dict[str, Any]:
    image = {"type": "image", "ref": blobs.put(png), "mime_type": "image/png", "alt_text": "dot"}
    audio = {
        "type": "audio",
        "ref": blobs.put(b"OggS"),
        "mime_type": "audio/ogg",
        "transcript": "hello",
    }
    notes = {
        "type": "document",
        "ref": blobs.put(b"notes"),
        "mime_type": "text/plain",
        "name": "n.txt",
    }
    pdf = {
        "type": "document",
        "ref": blobs.put(b"%PDF-1.4"),
        "mime_type": "application/pdf",
        "name": "r.pdf",
    }
    result = {
        "type": "tool_result",
        "tool_use_id": "tu_9",
        "content": [text("shot"), image, notes],
        "is_error": True,
    }
    return ctx(
        msg("system", text("You are terse."), cache=True),
        msg("user", text("Look:"), image, audio, notes, pdf),
        msg(
            "assistant",
            {"type": "thinking", "thinking": "signed", "signature": "sig=="},
            {"type": "thinking", "thinking": "unsigned"},
            text("Shooting."),
            {"type": "tool_use", "id": "tu_9", "name": "screenshot", "input": {}},
        ),
        msg("tool", result),
        msg("assistant", text("Done.")),
        msg("user", text("Thanks."), cache=True),
        stop=["\n\nHuman:"],
        thinking={"type": "enabled", "budget_tokens": 1024},
        tools=[{"name": "screenshot", "input_schema": {"type": "object", "properties": {}}}],
        tool_choice="auto",
    )


class TestRequestMatchesTheSDKTypes:
    def test_a_context_with_every_block_type_validates(self, blobs, png, valid_anthropic):
        valid_anthropic(anthropic_request(every_block(blobs, png), blob_reader=blobs))

    def test_a_tool_span_validates(self, valid_anthropic):
        valid_anthropic(anthropic_request(ctx(*tool_span())))

    def test_the_check_itself_rejects_fields_the_sdk_does_not_know(self, valid_anthropic):
        body = anthropic_request(ctx(msg("user", text("hi"))))
        body["messages"][0]["content"][0]["alt_text"] = "x"
        with pytest.raises(AssertionError):
            valid_anthropic(body)


class TestSystem:
    def test_one_system_message_is_a_plain_string(self):
        body = anthropic_request(
            ctx(msg("system", text("Be "), text("brief.")), msg("user", text("q")))
        )
        assert body["system"] == "Be brief."
        assert [m["role"] for m in body["messages"]] == ["user"]

    def test_a_cached_system_message_is_a_text_block_with_cache_control(self):
        body = anthropic_request(
            ctx(msg("system", text("Long rules."), cache=True), msg("user", text("q")))
        )
        assert body["system"] == [
            {"type": "text", "text": "Long rules.", "cache_control": EPHEMERAL}
        ]

    def test_system_messages_anywhere_are_hoisted_in_order(self):
        body = anthropic_request(
            ctx(msg("system", text("A")), msg("user", text("q")), msg("system", text("B")))
        )
        assert body["system"] == [text("A"), text("B")]
        assert [m["role"] for m in body["messages"]] == ["user"]


class TestToolSpans:
    def test_tool_use_stays_a_block_on_the_assistant_turn(self):
        body = anthropic_request(ctx(*tool_span()))
        assert body["messages"][1]["content"] == [
            text("Checking."),
            {"type": "tool_use", "id": "tu_1", "name": "weather", "input": {"city": "Oslo"}},
        ]

    def test_the_tool_role_becomes_a_user_message_of_tool_results(self):
        body = anthropic_request(ctx(*tool_span()))
        assert body["messages"][2] == {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "tu_1", "content": [text("-3C")]}],
        }

    def test_an_error_result_keeps_is_error(self, blobs, png):
        body = anthropic_request(every_block(blobs, png), blob_reader=blobs)
        result = body["messages"][2]["content"][0]
        assert result["type"] == "tool_result" and result["is_error"] is True

    def test_a_tool_result_can_hold_images_and_documents(self, blobs, png):
        body = anthropic_request(every_block(blobs, png), blob_reader=blobs)
        parts = body["messages"][2]["content"][0]["content"]
        assert [p["type"] for p in parts] == ["text", "image", "document"]

    def test_tool_use_in_a_user_message_is_refused(self):
        call = {"type": "tool_use", "id": "x", "name": "f", "input": {}}
        with pytest.raises(InvalidInput, match=r"messages\[0\]\.content\[0\]"):
            anthropic_request(ctx(msg("user", call)))


class TestRolesAlternate:
    def test_consecutive_same_role_messages_are_merged(self):
        body = anthropic_request(
            ctx(
                msg("user", text("a")),
                msg("user", text("b")),
                msg("assistant", text("c")),
                msg("assistant", text("d")),
            )
        )
        assert body["messages"] == [
            {"role": "user", "content": [text("a"), text("b")]},
            {"role": "assistant", "content": [text("c"), text("d")]},
        ]

    def test_a_tool_result_merged_with_user_text_comes_first(self):
        result = {"type": "tool_result", "tool_use_id": "tu_1", "content": [text("-3C")]}
        body = anthropic_request(
            ctx(*tool_span()[:2], msg("tool", result), msg("user", text("And Rome?")))
        )
        assert [b["type"] for b in body["messages"][2]["content"]] == ["tool_result", "text"]

    def test_a_thread_opening_with_the_assistant_gets_the_documented_lead_in(self):
        body = anthropic_request(
            ctx(msg("assistant", text("Hello! Ask me anything.")), msg("user", text("q")))
        )
        assert body["messages"][0] == {"role": "user", "content": [text(LEAD_IN)]}
        assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]

    def test_without_a_lead_in_such_a_thread_is_refused(self):
        with pytest.raises(InvalidInput, match="user message first"):
            anthropic_request(ctx(msg("assistant", text("Hello!"))), lead_in=None)

    def test_a_context_of_only_system_messages_is_refused(self):
        with pytest.raises(InvalidInput, match="no user or assistant message"):
            anthropic_request(ctx(msg("system", text("rules"))))


class TestThinking:
    def test_signed_thinking_is_kept_on_assistant_turns(self, blobs, png):
        body = anthropic_request(every_block(blobs, png), blob_reader=blobs)
        assert body["messages"][1]["content"][0] == {
            "type": "thinking",
            "thinking": "signed",
            "signature": "sig==",
        }

    def test_unsigned_thinking_is_dropped(self, blobs, png):
        body = anthropic_request(every_block(blobs, png), blob_reader=blobs)
        thoughts = [b for b in body["messages"][1]["content"] if b["type"] == "thinking"]
        assert [t["thinking"] for t in thoughts] == ["signed"]

    def test_thinking_in_a_user_message_is_dropped(self):
        body = anthropic_request(
            ctx(msg("user", {"type": "thinking", "thinking": "t", "signature": "s"}, text("q")))
        )
        assert body["messages"][0]["content"] == [text("q")]


class TestCacheFlags:
    def test_the_last_block_of_a_flagged_message_gets_cache_control(self):
        body = anthropic_request(ctx(msg("user", text("a"), text("b"), cache=True)))
        assert body["messages"][0]["content"] == [
            text("a"),
            {**text("b"), "cache_control": EPHEMERAL},
        ]

    def test_unflagged_messages_get_none(self):
        body = anthropic_request(ctx(*tool_span()))
        assert all("cache_control" not in b for m in body["messages"] for b in m["content"])

    def test_a_flag_stays_where_its_message_ended_after_merging(self):
        body = anthropic_request(ctx(msg("user", text("a"), cache=True), msg("user", text("b"))))
        assert body["messages"][0]["content"] == [
            {**text("a"), "cache_control": EPHEMERAL},
            text("b"),
        ]

    def test_beyond_the_api_limit_the_earliest_flags_are_dropped(self):
        turns = [
            msg("user" if i % 2 == 0 else "assistant", text(str(i)), cache=True) for i in range(6)
        ]
        body = anthropic_request(ctx(*turns))
        flagged = [
            b["text"] for m in body["messages"] for b in m["content"] if "cache_control" in b
        ]
        assert flagged == ["2", "3", "4", "5"] and len(flagged) == MAX_CACHE_BREAKPOINTS


class TestMedia:
    def test_an_image_is_a_base64_source(self, blobs, png):
        image = {"type": "image", "ref": blobs.put(png), "mime_type": "image/png"}
        block = anthropic_request(ctx(msg("user", image)), blob_reader=blobs)["messages"][0][
            "content"
        ][0]
        assert block == {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": "image/png",
                "data": base64.b64encode(png).decode(),
            },
        }

    def test_a_pdf_is_a_base64_document_titled_by_its_name(self, blobs):
        pdf = {
            "type": "document",
            "ref": blobs.put(b"%PDF-1.4"),
            "mime_type": "application/pdf",
            "name": "r.pdf",
        }
        block = anthropic_request(ctx(msg("user", pdf)), blob_reader=blobs)["messages"][0][
            "content"
        ][0]
        assert block == {
            "type": "document",
            "title": "r.pdf",
            "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQ="},
        }

    def test_a_textual_document_is_a_plain_text_source(self, blobs):
        doc = {"type": "document", "ref": blobs.put(b"a,b\n1,2"), "mime_type": "text/csv"}
        block = anthropic_request(ctx(msg("user", doc)), blob_reader=blobs)["messages"][0][
            "content"
        ][0]
        assert block == {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": "a,b\n1,2"},
        }

    def test_audio_is_sent_as_its_transcript(self, blobs):
        audio = {
            "type": "audio",
            "ref": blobs.put(b"OggS"),
            "mime_type": "audio/ogg",
            "transcript": "hi",
        }
        body = anthropic_request(ctx(msg("user", audio)), blob_reader=blobs)
        assert body["messages"][0]["content"] == [text("[audio transcript: hi]")]

    def test_an_image_type_the_api_refuses_is_a_surrogate(self, blobs):
        tiff = {
            "type": "image",
            "ref": blobs.put(b"II*"),
            "mime_type": "image/tiff",
            "alt_text": "scan",
        }
        body = anthropic_request(ctx(msg("user", tiff)), blob_reader=blobs)
        assert body["messages"][0]["content"] == [text("[image: scan]")]


class TestOptions:
    def test_max_tokens_comes_from_the_argument_first(self):
        assert (
            anthropic_request(ctx(msg("user", text("q")), max_tokens=50), max_tokens=10)[
                "max_tokens"
            ]
            == 10
        )

    def test_max_tokens_comes_from_options_next(self):
        assert anthropic_request(ctx(msg("user", text("q")), max_tokens=50))["max_tokens"] == 50

    def test_max_tokens_has_a_documented_default(self):
        assert anthropic_request(ctx(msg("user", text("q"))))["max_tokens"] == DEFAULT_MAX_TOKENS

    def test_stop_becomes_stop_sequences(self):
        assert anthropic_request(ctx(msg("user", text("q")), stop="END"))["stop_sequences"] == [
            "END"
        ]

    def test_openai_shaped_tools_become_anthropic_tools(self, valid_anthropic):
        tool = {
            "type": "function",
            "function": {
                "name": "f",
                "description": "d",
                "parameters": {"type": "object", "properties": {}},
            },
        }
        body = anthropic_request(ctx(msg("user", text("q")), tools=[tool], tool_choice="required"))
        valid_anthropic(body)
        assert body["tools"] == [
            {"name": "f", "description": "d", "input_schema": {"type": "object", "properties": {}}}
        ]
        assert body["tool_choice"] == {"type": "any"}

    def test_naming_one_tool_forces_it(self):
        body = anthropic_request(
            ctx(msg("user", text("q")), tools=[{"name": "f"}], tool_choice={"name": "f"})
        )
        assert body["tool_choice"] == {"type": "tool", "name": "f"}

    def test_loomdb_openai_only_and_sampling_options_are_not_sent(self):
        body = anthropic_request(
            ctx(
                msg("user", text("q")),
                provider_ptr="mega",
                seed=3,
                n=2,
                temperature=0.5,
                top_p=0.9,
                top_k=4,
            )
        )
        assert set(body) == {"model", "max_tokens", "messages"}

    def test_provider_specific_fields_come_from_options_anthropic(self, valid_anthropic):
        body = anthropic_request(
            ctx(msg("user", text("q")), anthropic={"metadata": {"user_id": "u1"}})
        )
        valid_anthropic(body)
        assert body["metadata"] == {"user_id": "u1"}
