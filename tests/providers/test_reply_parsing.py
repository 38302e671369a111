"""Provider replies parsed back into loomdb blocks (Anthropic Message objects, OpenAI JSON)."""

from __future__ import annotations

from typing import Any

import pytest
from anthropic.types import Message
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from loomdb.content import validate_blocks
from loomdb.errors import ProviderError
from loomdb.providers import parse_anthropic_message, parse_openai_chat, parse_openai_completion
from loomdb.providers.replies import OpenAIStream


def anthropic_message(*content: dict[str, Any], stop_reason: str = "end_turn") -> Message:
    return Message.model_validate(
        {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": list(content),
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 12, "output_tokens": 34, "cache_read_input_tokens": 5},
        }
    )


def openai_chat(message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    return ChatCompletion.model_validate(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-test",
            "choices": [
                {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}
            ],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
        }
    ).to_dict()


class TestAnthropicMessages:
    def test_text_becomes_a_text_block(self):
        reply = parse_anthropic_message(anthropic_message({"type": "text", "text": "Hello."}))
        assert reply.content == [{"type": "text", "text": "Hello."}]
        assert reply.stop_reason == "end_turn" and reply.model == "claude-test"

    def test_tool_use_becomes_a_tool_use_block(self):
        reply = parse_anthropic_message(
            anthropic_message(
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Oslo"}},
                stop_reason="tool_use",
            )
        )
        assert reply.content[1] == {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "weather",
            "input": {"city": "Oslo"},
        }
        assert reply.stop_reason == "tool_use"

    def test_thinking_keeps_its_signature(self):
        reply = parse_anthropic_message(
            anthropic_message(
                {"type": "thinking", "thinking": "2+2 is 4", "signature": "EqQB"},
                {"type": "text", "text": "4"},
            )
        )
        assert reply.content[0] == {"type": "thinking", "thinking": "2+2 is 4", "signature": "EqQB"}

    def test_redacted_thinking_is_left_out_of_the_blocks(self):
        reply = parse_anthropic_message(
            anthropic_message(
                {"type": "redacted_thinking", "data": "opaque"}, {"type": "text", "text": "ok"}
            )
        )
        assert reply.content == [{"type": "text", "text": "ok"}]

    def test_usage_is_reported_with_cache_reads(self):
        reply = parse_anthropic_message(anthropic_message({"type": "text", "text": "x"}))
        assert reply.usage == {
            "input_tokens": 12,
            "output_tokens": 34,
            "cache_read_input_tokens": 5,
        }

    def test_the_blocks_are_valid_loomdb_content(self):
        reply = parse_anthropic_message(
            anthropic_message(
                {"type": "thinking", "thinking": "t", "signature": "s"},
                {"type": "text", "text": "a"},
                {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
            )
        )
        assert validate_blocks(reply.content) == reply.content

    def test_an_empty_answer_is_one_empty_text_block(self):
        assert parse_anthropic_message(anthropic_message()).content == [
            {"type": "text", "text": ""}
        ]

    def test_a_reply_without_content_is_a_malformed_response(self):
        with pytest.raises(ProviderError, match="malformed response"):
            parse_anthropic_message({"type": "message"})


class TestOpenAIChatReplies:
    def test_content_becomes_text_and_finish_reasons_use_anthropic_words(self):
        reply = parse_openai_chat(openai_chat({"content": "Hi"}), "p")
        assert reply.content == [{"type": "text", "text": "Hi"}] and reply.stop_reason == "end_turn"
        assert (
            parse_openai_chat(openai_chat({"content": "H"}, "length"), "p").stop_reason
            == "max_tokens"
        )

    def test_tool_calls_become_tool_use_blocks_with_decoded_arguments(self):
        reply = parse_openai_chat(
            openai_chat(
                {
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "f", "arguments": '{"x": 1}'},
                        }
                    ],
                },
                "tool_calls",
            ),
            "p",
        )
        assert reply.content == [
            {"type": "tool_use", "id": "call_1", "name": "f", "input": {"x": 1}}
        ]
        assert reply.stop_reason == "tool_use"

    def test_arguments_that_are_not_a_json_object_are_kept_as_text(self):
        reply = parse_openai_chat(
            openai_chat(
                {
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{oops"},
                        }
                    ],
                }
            ),
            "p",
        )
        assert reply.content[0]["input"] == {"_unparsed_arguments": "{oops"}

    def test_reasoning_content_becomes_a_leading_thinking_block(self):
        raw = openai_chat({"content": "4"})
        raw["choices"][0]["message"]["reasoning_content"] = "2+2"
        assert parse_openai_chat(raw, "p").content[0] == {"type": "thinking", "thinking": "2+2"}

    def test_a_refusal_is_text_with_stop_reason_refusal(self):
        reply = parse_openai_chat(openai_chat({"content": None, "refusal": "I can't."}), "p")
        assert (
            reply.content == [{"type": "text", "text": "I can't."}]
            and reply.stop_reason == "refusal"
        )

    def test_usage_is_renamed_to_input_and_output_tokens(self):
        assert parse_openai_chat(openai_chat({"content": "x"}), "p").usage == {
            "input_tokens": 7,
            "output_tokens": 3,
        }

    def test_a_reply_without_choices_is_a_malformed_response_naming_the_provider(self):
        with pytest.raises(ProviderError, match="^milli: malformed response"):
            parse_openai_chat({"id": "x", "choices": []}, "milli")

    def test_a_completions_reply_is_one_text_block(self):
        raw = {
            "choices": [{"index": 0, "text": " a time", "finish_reason": "length"}],
            "model": "base",
        }
        reply = parse_openai_completion(raw, "p")
        assert (
            reply.content == [{"type": "text", "text": " a time"}]
            and reply.stop_reason == "max_tokens"
        )


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return ChatCompletionChunk.model_validate(
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "gpt-test",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
    ).to_dict()


class TestOpenAIStreams:
    def test_text_deltas_are_returned_and_assembled(self):
        stream = OpenAIStream("p", chat=True)
        deltas = [
            stream.add(chunk({"role": "assistant", "content": ""})),
            stream.add(chunk({"content": "Hel"})),
            stream.add(chunk({"content": "lo"})),
            stream.add(chunk({}, "stop")),
        ]
        assert deltas == ["", "Hel", "lo", ""]
        reply = stream.reply()
        assert (
            reply.content == [{"type": "text", "text": "Hello"}] and reply.stop_reason == "end_turn"
        )

    def test_tool_call_fragments_are_joined_by_index(self):
        stream = OpenAIStream("p", chat=True)
        stream.add(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "f", "arguments": '{"ci'},
                        }
                    ]
                }
            )
        )
        stream.add(chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'ty": "Oslo"}'}}]}))
        stream.add(chunk({}, "tool_calls"))
        assert stream.reply().content == [
            {"type": "tool_use", "id": "call_1", "name": "f", "input": {"city": "Oslo"}}
        ]

    def test_every_chunk_is_kept_as_the_raw_response(self):
        stream = OpenAIStream("p", chat=True)
        for c in (chunk({"content": "a"}), chunk({}, "stop")):
            stream.add(c)
        assert len(stream.chunks) == 2
