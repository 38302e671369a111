"""OpenAI chat JSONL and ShareGPT: linear conversations with tool calls and media."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from interop_fixtures import (
    active_branch,
    block_types,
    branch_points,
    load_sample,
    only,
    parents_first,
    parse_all,
    roots,
    sample,
    write_json,
    write_jsonl,
)

from loomdb.interop.model import check_blocks


def openai_line() -> dict[str, Any]:
    return {
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 21C"},
            {"role": "assistant", "content": "Sunny, 21C.", "weight": 1},
        ],
        "tools": [
            {
                "type": "function",
                "function": {"name": "get_weather", "parameters": {"type": "object"}},
            }
        ],
    }


class TestOpenAIChatJsonl:
    def test_each_line_is_one_linear_conversation(self, tmp_path: Path) -> None:
        convs, errors = parse_all(
            write_jsonl(tmp_path, "train.jsonl", [openai_line(), openai_line()])
        )
        assert not errors and len(convs) == 2
        conv = convs[0]
        assert [m.role for m in conv.messages] == [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
        ]
        assert len(roots(conv)) == 1 and branch_points(conv) == 0 and parents_first(conv)
        assert active_branch(conv) == [m.source_id for m in conv.messages]

    def test_tool_calls_become_tool_use_and_tool_messages_tool_result(self, tmp_path: Path) -> None:
        conv = only(write_jsonl(tmp_path, "train.jsonl", [openai_line()]))
        call, result = conv.messages[2].content[0], conv.messages[3].content[0]
        assert call == {
            "type": "tool_use",
            "id": "call_1",
            "name": "get_weather",
            "input": {"city": "Paris"},
        }
        assert result == {
            "type": "tool_result",
            "tool_use_id": "call_1",
            "content": [{"type": "text", "text": "sunny, 21C"}],
        }
        assert conv.metadata["tools"][0]["function"]["name"] == "get_weather"

    def test_identical_lines_share_a_content_hash_id(self, tmp_path: Path) -> None:
        convs, _ = parse_all(write_jsonl(tmp_path, "train.jsonl", [openai_line(), openai_line()]))
        assert convs[0].source_id == convs[1].source_id
        assert convs[0].source_id.startswith("sha256:")

    def test_image_and_audio_parts_become_attachments(self, tmp_path: Path) -> None:
        png = "data:image/png;base64," + base64.b64encode(b"PNG").decode()
        parts = [
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": png}},
            {
                "type": "input_audio",
                "input_audio": {"data": base64.b64encode(b"WAV").decode(), "format": "wav"},
            },
        ]
        conv = only(
            write_jsonl(
                tmp_path, "train.jsonl", [{"messages": [{"role": "user", "content": parts}]}]
            )
        )
        assert block_types(conv.messages[0]) == ["text", "image", "audio"]
        assert [a.data for a in conv.attachments] == [b"PNG", b"WAV"]
        assert check_blocks(conv.messages[0].content, "here")

    def test_a_preference_line_makes_the_two_outputs_siblings(self, tmp_path: Path) -> None:
        line = {
            "input": {"messages": [{"role": "user", "content": "hi"}]},
            "preferred_output": [{"role": "assistant", "content": "hello"}],
            "non_preferred_output": [{"role": "assistant", "content": "go away"}],
        }
        conv = only(write_jsonl(tmp_path, "dpo.jsonl", [line]))
        assert branch_points(conv) == 1
        assert conv.messages[-2].metadata["preference"] == "preferred"
        assert conv.current_source_id == conv.messages[-2].source_id

    def test_bad_lines_are_parse_errors_naming_the_line(self, tmp_path: Path) -> None:
        bad_role = {"messages": [{"role": "wizard", "content": "x"}]}
        bad_type = {"messages": {"role": "user"}}
        path = write_jsonl(
            tmp_path, "train.jsonl", [openai_line(), bad_role, bad_type, openai_line()]
        )
        convs, errors = parse_all(path)
        assert len(convs) == 2
        assert (errors[0].where, errors[1].where) == ("train.jsonl line 2", "train.jsonl line 3")
        assert "messages[0].role" in errors[0].reason and "an array" in errors[1].reason


def sharegpt_record(**extra: Any) -> dict[str, Any]:
    return {
        "conversations": [
            {"from": "human", "value": "What is 2+2? Use the tool."},
            {
                "from": "function_call",
                "value": json.dumps({"name": "calc", "arguments": {"expr": "2+2"}}),
            },
            {"from": "observation", "value": "4"},
            {"from": "gpt", "value": "It is 4."},
        ],
        "system": "You can call tools.",
        "tools": '[{"name": "calc"}]',
        **extra,
    }


class TestShareGPT:
    def test_conversations_from_value_become_a_linear_chat_with_tools(self, tmp_path: Path) -> None:
        conv = only(write_json(tmp_path, "data.json", [sharegpt_record()]))
        assert [m.role for m in conv.messages] == ["user", "assistant", "tool", "assistant"]
        call, result = conv.messages[1].content[0], conv.messages[2].content[0]
        assert (
            call["type"] == "tool_use"
            and call["name"] == "calc"
            and call["input"] == {"expr": "2+2"}
        )
        assert result["type"] == "tool_result" and result["tool_use_id"] == call["id"]
        assert conv.system == "You can call tools."
        assert conv.current_source_id == conv.messages[-1].source_id

    def test_image_placeholders_take_the_images_in_order(self, tmp_path: Path) -> None:
        (tmp_path / "imgs").mkdir()
        (tmp_path / "imgs" / "a.jpg").write_bytes(b"JPEG-A")
        record = {
            "messages": [
                {"role": "user", "content": "<image>Who?"},
                {"role": "assistant", "content": "Them."},
                {"role": "user", "content": "And <image>?"},
            ],
            "images": ["imgs/a.jpg", "imgs/missing.png"],
        }
        conv = only(write_json(tmp_path, "data.json", [record]))
        assert block_types(conv.messages[0]) == ["image", "text"]
        assert block_types(conv.messages[2]) == ["text", "image", "text"]
        assert [(a.data, a.mime_type) for a in conv.attachments] == [
            (b"JPEG-A", "image/jpeg"),
            (None, "image/png"),
        ]
        assert conv.messages[2].content[1]["ref"] == conv.attachments[1].key

    def test_placeholders_and_images_that_do_not_match_are_parse_errors(
        self, tmp_path: Path
    ) -> None:
        too_few = {
            "conversations": [{"from": "human", "value": "<image><image>"}],
            "images": ["a.jpg"],
        }
        too_many = {
            "conversations": [{"from": "human", "value": "<image>"}],
            "images": ["a.jpg", "b.jpg"],
        }
        convs, errors = parse_all(
            write_json(tmp_path, "data.json", [sharegpt_record(), too_few, too_many])
        )
        assert len(convs) == 1 and len(errors) == 2
        assert "placeholders" in errors[0].reason and "images" in errors[1].reason

    def test_unknown_speakers_and_wrong_types_name_their_place(self, tmp_path: Path) -> None:
        odd = {"conversations": [{"from": "narrator", "value": "x"}]}
        wrong = {"conversations": [{"from": "human", "value": 7}]}
        _, errors = parse_all(write_json(tmp_path, "data.json", [odd, wrong]), "sharegpt")
        assert "conversations[0].from" in errors[0].reason
        assert "conversations[0].value" in errors[1].reason

    def test_openai_style_tool_calls_in_messages_are_kept(self, tmp_path: Path) -> None:
        record = {"messages": openai_line()["messages"][1:]}
        conv = only(write_json(tmp_path, "data.json", [record]), "sharegpt")
        assert [block_types(m) for m in conv.messages] == [
            ["text"],
            ["tool_use"],
            ["tool_result"],
            ["text"],
        ]
        assert (
            conv.messages[2].content[0]["tool_use_id"]
            == "call_1"
            == conv.messages[1].content[0]["id"]
        )

    def test_sharegpt_jsonl_is_read_line_by_line(self, tmp_path: Path) -> None:
        convs, errors = parse_all(
            write_jsonl(
                tmp_path, "data.jsonl", [sharegpt_record(id="r1"), sharegpt_record(id="r2")]
            )
        )
        assert not errors and [c.source_id for c in convs] == ["r1", "r2"]


class TestShareGPTRealSample:
    def test_messages_and_image_placeholders_match_the_file(self) -> None:
        raw = load_sample("sharegpt_llamafactory_mllm_demo.json")
        convs, errors = parse_all(sample("sharegpt_llamafactory_mllm_demo.json"))
        assert not errors and len(convs) == len(raw) == 6
        for conv, record in zip(convs, raw, strict=True):
            assert len(conv.messages) == len(record["messages"]) == 4
            assert [m.role for m in conv.messages] == [m["role"] for m in record["messages"]]
            images = [b for m in conv.messages for b in m.content if b["type"] == "image"]
            assert (
                len(images)
                == sum(m["content"].count("<image>") for m in record["messages"])
                == len(record["images"])
            )
            assert {a.name for a in conv.attachments} == set(record["images"])
            assert all(a.data is None for a in conv.attachments)  # the image files are not shipped
            assert branch_points(conv) == 0 and parents_first(conv)
