"""OpenAI Chat Completions and Completions bodies, checked against the openai SDK's types."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from loomdb.errors import InvalidInput
from loomdb.providers import completion_prompt, openai_chat_request, openai_completion_request


def msg(role: str, *blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"role": role, "content": list(blocks), **extra}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def ctx(*messages: dict[str, Any], **options: Any) -> dict[str, Any]:
    return {"messages": list(messages), "options": {"model": "gpt-test", **options}}


def tool_span() -> list[dict[str, Any]]:
    return [
        msg("user", text("Weather in Oslo and Rome?")),
        msg(
            "assistant",
            text("Checking."),
            {"type": "tool_use", "id": "call_1", "name": "weather", "input": {"city": "Oslo"}},
            {"type": "tool_use", "id": "call_2", "name": "weather", "input": {"city": "Rome"}},
        ),
        msg(
            "tool",
            {
                "type": "tool_result",
                "tool_use_id": "call_1",
                "content": [text("-3C")],
                "name": "weather",
            },
            {
                "type": "tool_result",
                "tool_use_id": "call_2",
                "content": [text("no data")],
                "is_error": True,
            },
        ),
        msg("assistant", text("Oslo is at -3C; Rome is unknown.")),
    ]


def every_block(blobs: Any, png: bytes) -> dict[str, Any]:
    image = {
        "type": "image",
        "ref": blobs.put(png),
        "mime_type": "image/png",
        "width": 1,
        "height": 1,
        "alt_text": "a red dot",
    }
    wav = {
        "type": "audio",
        "ref": blobs.put(b"RIFF....WAVE"),
        "mime_type": "audio/wav",
        "duration_ms": 10,
    }
    ogg = {
        "type": "audio",
        "ref": blobs.put(b"OggS"),
        "mime_type": "audio/ogg",
        "transcript": "hello",
    }
    notes = {
        "type": "document",
        "ref": blobs.put(b"plain notes"),
        "mime_type": "text/plain",
        "name": "n.txt",
    }
    pdf = {
        "type": "document",
        "ref": blobs.put(b"%PDF-1.4"),
        "mime_type": "application/pdf",
        "name": "r.pdf",
    }
    return ctx(
        msg("system", text("You are terse.")),
        msg("user", text("Look:"), image, wav, ogg, notes, pdf),
        msg(
            "assistant",
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            text("I see."),
            image,
        ),
        *tool_span(),
        msg("user", text("Thanks."), cache=True),
        temperature=0.2,
        max_tokens=64,
        top_p=0.9,
        stop=["\n\n"],
        seed=7,
    )


class TestChatRequestMatchesTheSDKTypes:
    def test_a_context_with_every_block_type_validates(self, blobs, png, valid_openai_chat):
        valid_openai_chat(openai_chat_request(every_block(blobs, png), blob_reader=blobs))

    def test_a_tool_span_validates(self, valid_openai_chat):
        valid_openai_chat(openai_chat_request(ctx(*tool_span())))

    def test_tools_and_tool_choice_validate(self, valid_openai_chat):
        tools = [
            {
                "name": "weather",
                "description": "Weather now",
                "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
            }
        ]
        body = openai_chat_request(
            ctx(msg("user", text("hi")), tools=tools, tool_choice={"name": "weather"})
        )
        valid_openai_chat(body)

    def test_the_check_itself_rejects_fields_the_sdk_does_not_know(self, valid_openai_chat):
        body = openai_chat_request(ctx(msg("user", text("hi"))))
        body["messages"][0]["cache"] = True
        with pytest.raises(AssertionError):
            valid_openai_chat(body)


class TestMessagesByRole:
    def test_system_becomes_a_system_message_with_its_text(self):
        body = openai_chat_request(
            ctx(msg("system", text("Be "), text("brief.")), msg("user", text("hi")))
        )
        assert body["messages"][0] == {"role": "system", "content": "Be brief."}

    def test_text_only_content_is_sent_as_one_string(self):
        body = openai_chat_request(ctx(msg("user", text("a"), text("b"))))
        assert body["messages"] == [{"role": "user", "content": "ab"}]

    def test_mixed_content_is_sent_as_parts_in_order(self, blobs, png):
        image = {"type": "image", "ref": blobs.put(png), "mime_type": "image/png"}
        body = openai_chat_request(ctx(msg("user", text("see"), image)), blob_reader=blobs)
        assert [p["type"] for p in body["messages"][0]["content"]] == ["text", "image_url"]

    def test_media_in_an_assistant_message_is_sent_as_a_surrogate_text(self, blobs, png):
        image = {
            "type": "image",
            "ref": blobs.put(png),
            "mime_type": "image/png",
            "alt_text": "a dot",
        }
        body = openai_chat_request(
            ctx(msg("user", text("q")), msg("assistant", text("Here: "), image))
        )
        assert body["messages"][1] == {"role": "assistant", "content": "Here: [image: a dot]"}


class TestToolSpans:
    def test_tool_use_blocks_become_tool_calls_with_json_arguments(self):
        assistant = openai_chat_request(ctx(*tool_span()))["messages"][1]
        assert assistant["content"] == "Checking."
        assert [c["id"] for c in assistant["tool_calls"]] == ["call_1", "call_2"]
        assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"city": "Oslo"}
        assert assistant["tool_calls"][0]["function"]["name"] == "weather"

    def test_each_tool_result_becomes_one_tool_message(self):
        messages = openai_chat_request(ctx(*tool_span()))["messages"]
        assert messages[2] == {"role": "tool", "tool_call_id": "call_1", "content": "-3C"}
        assert messages[3]["tool_call_id"] == "call_2"

    def test_an_error_result_is_marked_in_its_text(self):
        messages = openai_chat_request(ctx(*tool_span()))["messages"]
        assert messages[3]["content"] == "[error] no data"

    def test_the_answer_after_the_results_follows_them(self):
        messages = openai_chat_request(ctx(*tool_span()))["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "assistant"]

    def test_an_assistant_turn_of_only_tool_calls_has_null_content(self):
        call = {"type": "tool_use", "id": "c", "name": "f", "input": {}}
        body = openai_chat_request(ctx(msg("user", text("go")), msg("assistant", call)))
        assert body["messages"][1]["content"] is None
        assert body["messages"][1]["tool_calls"][0]["function"]["arguments"] == "{}"

    def test_images_a_tool_returned_follow_in_a_user_message_naming_the_call(
        self, blobs, png, valid_openai_chat
    ):
        image = {"type": "image", "ref": blobs.put(png), "mime_type": "image/png"}
        call = {"type": "tool_use", "id": "shot", "name": "screenshot", "input": {}}
        result = {"type": "tool_result", "tool_use_id": "shot", "content": [text("done"), image]}
        body = openai_chat_request(
            ctx(msg("user", text("go")), msg("assistant", call), msg("tool", result)),
            blob_reader=blobs,
        )
        valid_openai_chat(body)
        tool, follow = body["messages"][2], body["messages"][3]
        assert tool == {"role": "tool", "tool_call_id": "shot", "content": "done"}
        assert follow["role"] == "user"
        assert follow["content"][0] == text("[returned by tool call shot]")
        assert follow["content"][1]["type"] == "image_url"


class TestMedia:
    def test_an_image_is_a_data_url_of_the_blob_bytes(self, blobs, png):
        image = {"type": "image", "ref": blobs.put(png), "mime_type": "image/png"}
        part = openai_chat_request(ctx(msg("user", image)), blob_reader=blobs)["messages"][0][
            "content"
        ][0]
        assert part["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(png).decode()

    def test_a_document_with_text_is_sent_as_that_text(self, blobs):
        doc = {
            "type": "document",
            "ref": blobs.put(b"%PDF"),
            "mime_type": "application/pdf",
            "text": "extracted",
        }
        body = openai_chat_request(ctx(msg("user", doc)), blob_reader=blobs)
        assert body["messages"][0]["content"] == "extracted"

    def test_a_textual_document_is_sent_decoded(self, blobs):
        doc = {
            "type": "document",
            "ref": blobs.put("naïve notes".encode()),
            "mime_type": "text/markdown",
        }
        body = openai_chat_request(ctx(msg("user", doc)), blob_reader=blobs)
        assert body["messages"][0]["content"] == "naïve notes"

    def test_a_binary_document_is_a_file_part_with_a_base64_data_url(self, blobs):
        doc = {
            "type": "document",
            "ref": blobs.put(b"%PDF-1.4"),
            "mime_type": "application/pdf",
            "name": "r.pdf",
        }
        part = openai_chat_request(ctx(msg("user", text("read"), doc)), blob_reader=blobs)[
            "messages"
        ][0]["content"][1]
        assert part == {
            "type": "file",
            "file": {"filename": "r.pdf", "file_data": "data:application/pdf;base64,JVBERi0xLjQ="},
        }

    def test_wav_audio_is_input_audio(self, blobs):
        audio = {"type": "audio", "ref": blobs.put(b"RIFF"), "mime_type": "audio/wav"}
        part = openai_chat_request(ctx(msg("user", text("hear"), audio)), blob_reader=blobs)[
            "messages"
        ][0]["content"][1]
        assert part == {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}

    def test_audio_openai_cannot_take_is_its_transcript(self, blobs):
        audio = {
            "type": "audio",
            "ref": blobs.put(b"OggS"),
            "mime_type": "audio/ogg",
            "transcript": "hello",
        }
        body = openai_chat_request(ctx(msg("user", audio)), blob_reader=blobs)
        assert body["messages"][0]["content"] == "[audio transcript: hello]"

    def test_media_without_a_blob_reader_is_refused_with_its_place(self, blobs, png):
        image = {"type": "image", "ref": blobs.put(png), "mime_type": "image/png"}
        with pytest.raises(InvalidInput, match=r"messages\[0\]\.content\[1\]"):
            openai_chat_request(ctx(msg("user", text("x"), image)))


class TestThinking:
    def test_thinking_blocks_are_dropped(self):
        thinking = {"type": "thinking", "thinking": "secret", "signature": "s"}
        body = openai_chat_request(
            ctx(msg("user", text("q")), msg("assistant", thinking, text("a")))
        )
        assert body["messages"][1] == {"role": "assistant", "content": "a"}

    def test_an_assistant_message_of_only_thinking_is_left_out(self):
        thinking = {"type": "thinking", "thinking": "secret"}
        body = openai_chat_request(ctx(msg("user", text("q")), msg("assistant", thinking)))
        assert [m["role"] for m in body["messages"]] == ["user"]


class TestOptions:
    def test_the_model_argument_wins_over_options(self):
        assert openai_chat_request(ctx(msg("user", text("q"))), model="other")["model"] == "other"

    def test_the_model_comes_from_options_otherwise(self):
        assert openai_chat_request(ctx(msg("user", text("q"))))["model"] == "gpt-test"

    def test_no_model_at_all_is_invalid_input(self):
        with pytest.raises(InvalidInput, match="no model"):
            openai_chat_request({"messages": [msg("user", text("q"))], "options": {}})

    def test_sampling_options_are_copied_to_request_fields(self):
        body = openai_chat_request(
            ctx(
                msg("user", text("q")), temperature=0.3, max_tokens=9, top_p=0.5, stop="END", seed=3
            )
        )
        assert {k: body[k] for k in ("temperature", "max_tokens", "top_p", "stop", "seed")} == {
            "temperature": 0.3,
            "max_tokens": 9,
            "top_p": 0.5,
            "stop": "END",
            "seed": 3,
        }

    def test_loomdb_options_are_not_sent(self):
        body = openai_chat_request(
            ctx(msg("user", text("q")), provider_ptr="mega", mode="chat", n=3)
        )
        assert set(body) == {"model", "messages"}

    def test_neutral_tools_become_function_tools(self):
        tools = [{"name": "f", "input_schema": {"type": "object"}}]
        body = openai_chat_request(ctx(msg("user", text("q")), tools=tools, tool_choice="any"))
        assert body["tools"] == [
            {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
        ]
        assert body["tool_choice"] == "required"

    def test_openai_shaped_tools_pass_unchanged(self):
        tool = {
            "type": "function",
            "function": {"name": "f", "description": "d", "parameters": {"type": "object"}},
        }
        assert openai_chat_request(ctx(msg("user", text("q")), tools=[tool]))["tools"] == [tool]

    def test_provider_specific_fields_come_from_options_openai(self):
        body = openai_chat_request(
            ctx(msg("user", text("q")), openai={"logprobs": True, "top_logprobs": 2})
        )
        assert body["logprobs"] is True and body["top_logprobs"] == 2

    def test_an_empty_context_is_invalid_input(self):
        with pytest.raises(InvalidInput, match="nothing to send"):
            openai_chat_request(ctx())


class TestCompletionPrompt:
    thread = ctx(
        msg("system", text("SYS ")),
        msg("user", text("Once upon")),
        msg("assistant", text(" a time")),
    )

    def test_the_prompt_is_the_path_text_concatenated_exactly(self):
        assert completion_prompt(self.thread) == {"prompt": "Once upon a time"}

    def test_the_system_text_is_included_only_when_asked(self):
        assert completion_prompt(self.thread, include_system=True) == {
            "prompt": "SYS Once upon a time"
        }

    def test_the_completions_body_validates_and_carries_options(self, valid_openai_completion):
        body = openai_completion_request(
            {
                **self.thread,
                "options": {
                    "model": "base",
                    "max_tokens": 5,
                    "temperature": 1.0,
                    "provider_ptr": "x",
                },
            }
        )
        valid_openai_completion(body)
        assert body == {
            "model": "base",
            "prompt": "Once upon a time",
            "max_tokens": 5,
            "temperature": 1.0,
        }
