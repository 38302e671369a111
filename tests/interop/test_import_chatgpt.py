from __future__ import annotations

import json
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from interop_fixtures import (
    active_branch,
    block_types,
    branch_points,
    by_id,
    cg_branched,
    cg_conversation,
    cg_message,
    children_of,
    load_sample,
    only,
    parents_first,
    parse_all,
    roots,
    sample,
    text_of,
    write_json,
)

from loomdb.errors import InvalidInput
from loomdb.interop import ImportedConversation, parse_file
from loomdb.interop.model import check_blocks


def conv_with(message: dict[str, Any]) -> dict[str, Any]:
    return cg_conversation(
        [("root", None, None), (message["id"], "root", message)], current_node=message["id"]
    )


class TestTreeStructure:
    def test_every_branch_is_kept_and_the_null_root_is_not_a_message(self, tmp_path: Path) -> None:
        conv = only(write_json(tmp_path, "c.json", [cg_branched()]))
        assert [m.source_id for m in conv.messages] == ["sys", "u1", "a1", "u2", "a2", "a1b"]
        assert roots(conv) == ["sys"]
        assert branch_points(conv) == 1

    def test_the_active_branch_walks_up_from_current_node(self, tmp_path: Path) -> None:
        conv = only(write_json(tmp_path, "c.json", [cg_branched()]))
        assert conv.current_source_id == "a2"
        assert active_branch(conv) == ["sys", "u1", "a1", "u2", "a2"]

    def test_messages_come_parents_first_whatever_the_mapping_order(self, tmp_path: Path) -> None:
        raw = cg_branched()
        raw["mapping"] = dict(reversed(list(raw["mapping"].items())))
        conv = only(write_json(tmp_path, "c.json", [raw]))
        assert parents_first(conv)
        assert len(conv.messages) == 6

    def test_siblings_follow_the_children_list_not_the_mapping_order(self, tmp_path: Path) -> None:
        raw = cg_branched()
        raw["mapping"]["u1"]["children"] = ["a1b", "a1"]
        conv = only(write_json(tmp_path, "c.json", [raw]))
        assert children_of(conv)["u1"] == ["a1b", "a1"]

    def test_a_missing_current_node_picks_the_newest_leaf_and_says_so(self, tmp_path: Path) -> None:
        raw = cg_branched()
        del raw["current_node"]
        conv = only(write_json(tmp_path, "c.json", [raw]))
        assert conv.current_source_id == "a1b"
        assert conv.metadata["current_chosen_by"] == "newest_leaf"
        assert conv.metadata["current_node"] == "missing"

    def test_a_current_node_not_in_the_mapping_picks_the_newest_leaf(self, tmp_path: Path) -> None:
        raw = cg_branched()
        raw["current_node"] = "gone"
        conv = only(write_json(tmp_path, "c.json", [raw]))
        assert conv.current_source_id == "a1b"
        assert "gone" in conv.metadata["current_node"]

    def test_messages_under_a_null_root_become_top_level_siblings(self, tmp_path: Path) -> None:
        raw = cg_conversation(
            [
                ("root", None, None),
                ("x", "root", cg_message("x", "user", ["one"])),
                ("y", "root", cg_message("y", "user", ["two"])),
            ],
            current_node="y",
        )
        conv = only(write_json(tmp_path, "c.json", [raw]))
        assert roots(conv) == ["x", "y"]
        assert all(m.parent_source_id is None for m in conv.messages)

    def test_a_root_without_message_or_parent_keys_is_not_a_message(self, tmp_path: Path) -> None:
        raw = cg_conversation(
            [("root", None, None), ("u", "root", cg_message("u", "user", ["hi"]))], current_node="u"
        )
        raw["mapping"]["root"] = {"id": "root", "children": ["u"]}
        conv = only(write_json(tmp_path, "c.json", [raw]))
        assert [m.source_id for m in conv.messages] == ["u"]
        assert roots(conv) == ["u"]

    def test_a_real_system_message_at_the_root_is_kept(self, tmp_path: Path) -> None:
        raw = cg_conversation(
            [
                ("s", None, cg_message("s", "system", [""])),
                ("u", "s", cg_message("u", "user", ["hi"])),
            ],
            current_node="u",
        )
        conv = only(write_json(tmp_path, "c.json", [raw]))
        assert roots(conv) == ["s"]
        assert by_id(conv)["s"].role == "system"

    def test_a_messageless_node_in_the_middle_hands_its_children_to_the_nearest_message(
        self, tmp_path: Path
    ) -> None:
        raw = cg_conversation(
            [
                ("u", None, cg_message("u", "user", ["hi"])),
                ("gap", "u", None),
                ("a", "gap", cg_message("a", "assistant", ["yo"])),
            ],
            current_node="a",
        )
        conv = only(write_json(tmp_path, "c.json", [raw]))
        assert by_id(conv)["a"].parent_source_id == "u"

    def test_a_message_with_neither_content_nor_role_is_not_a_node(self, tmp_path: Path) -> None:
        raw = cg_conversation(
            [
                ("root", None, None),
                ("e", "root", {"id": "e"}),
                ("u", "e", cg_message("u", "user", ["hi"])),
            ],
            current_node="u",
        )
        conv = only(write_json(tmp_path, "c.json", [raw]))
        assert [m.source_id for m in conv.messages] == ["u"]

    def test_a_single_conversation_object_is_accepted(self, tmp_path: Path) -> None:
        conv = only(write_json(tmp_path, "one.json", cg_branched()), "chatgpt")
        assert conv.source_id == "conv-1"
        assert conv.title == "A chat"


class TestMessageFields:
    def test_roles_authors_models_and_times_come_from_the_message(self, tmp_path: Path) -> None:
        conv = only(write_json(tmp_path, "c.json", [cg_branched()]))
        msgs = by_id(conv)
        assert [msgs[i].role for i in ("sys", "u1", "a1")] == ["system", "user", "assistant"]
        assert msgs["a1"].model == "gpt-4o"
        assert msgs["u1"].model is None
        assert msgs["u1"].created_at == datetime(2023, 11, 14, 22, 13, 21, tzinfo=UTC)
        assert conv.created_at == datetime.fromtimestamp(1_700_000_000, UTC)

    def test_a_tool_message_keeps_its_author_name(self, tmp_path: Path) -> None:
        msg = cg_message(
            "t", "tool", content={"content_type": "execution_output", "text": "42"}, name="python"
        )
        conv = only(write_json(tmp_path, "c.json", [conv_with(msg)]))
        assert (conv.messages[0].role, conv.messages[0].author) == ("tool", "python")

    @pytest.mark.parametrize("create_time", [None, "absent"])
    def test_a_null_or_absent_create_time_is_none(self, tmp_path: Path, create_time: Any) -> None:
        msg = cg_message("u", "user", ["hi"], create_time=None)
        if create_time == "absent":
            del msg["create_time"]
        raw = conv_with(msg)
        del raw["create_time"]
        conv = only(write_json(tmp_path, "c.json", [raw]))
        assert conv.messages[0].created_at is None
        assert conv.created_at is None

    def test_hidden_nodes_are_kept_and_marked_hidden(self, tmp_path: Path) -> None:
        conv = only(write_json(tmp_path, "c.json", [cg_branched()]))
        assert by_id(conv)["sys"].hidden is True
        assert by_id(conv)["u1"].hidden is False

    def test_a_recipient_other_than_all_is_kept_in_metadata(self, tmp_path: Path) -> None:
        msg = cg_message(
            "c",
            "assistant",
            content={"content_type": "code", "language": "python", "text": "1+1"},
            recipient="python",
        )
        conv = only(write_json(tmp_path, "c.json", [conv_with(msg)]))
        assert conv.messages[0].metadata["recipient"] == "python"
        plain = only(write_json(tmp_path, "d.json", [cg_branched()]))
        assert "recipient" not in by_id(plain)["u1"].metadata

    def test_a_message_with_a_role_but_empty_content_is_still_a_message(
        self, tmp_path: Path
    ) -> None:
        conv = only(write_json(tmp_path, "c.json", [conv_with(cg_message("e", "assistant", []))]))
        assert conv.messages[0].content == [{"type": "text", "text": ""}]


def image_part(file_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "content_type": "image_asset_pointer",
        "asset_pointer": f"file-service://{file_id}",
        "size_bytes": 10,
        "width": 64,
        "height": 32,
        **extra,
    }


class TestContentTypes:
    def content_of(self, tmp_path: Path, content: dict[str, Any], **kw: Any) -> Any:
        conv = only(
            write_json(
                tmp_path, "c.json", [conv_with(cg_message("m", "assistant", content=content, **kw))]
            )
        )
        return conv, conv.messages[0]

    def test_text_parts_become_text_blocks(self, tmp_path: Path) -> None:
        _, msg = self.content_of(tmp_path, {"content_type": "text", "parts": ["hello"]})
        assert msg.content == [{"type": "text", "text": "hello"}]

    def test_multimodal_text_mixes_text_and_image_blocks_that_reference_attachments(
        self, tmp_path: Path
    ) -> None:
        content = {
            "content_type": "multimodal_text",
            "parts": [image_part("file-AbC123"), "what is this?"],
        }
        meta = {"attachments": [{"id": "file-AbC123", "name": "cat.png", "mime_type": "image/png"}]}
        conv, msg = self.content_of(tmp_path, content, metadata=meta)
        assert block_types(msg) == ["image", "text"]
        image = msg.content[0]
        assert image == {
            "type": "image",
            "ref": "attachment:file-AbC123",
            "mime_type": "image/png",
            "width": 64,
            "height": 32,
        }
        assert [(a.key, a.data, a.mime_type, a.name) for a in conv.attachments] == [
            ("attachment:file-AbC123", None, "image/png", "cat.png")
        ]

    def test_code_becomes_a_fenced_text_block_with_its_language_in_metadata(
        self, tmp_path: Path
    ) -> None:
        _, msg = self.content_of(
            tmp_path, {"content_type": "code", "language": "python", "text": "print(1)"}
        )
        assert msg.content == [{"type": "text", "text": "```python\nprint(1)\n```"}]
        assert msg.metadata["language"] == "python"

    def test_execution_output_is_text_plus_the_images_it_displayed(self, tmp_path: Path) -> None:
        meta = {
            "aggregate_result": {
                "messages": [{"message_type": "image", "image_url": "file-service://file-plot1"}]
            }
        }
        _, msg = self.content_of(
            tmp_path,
            {"content_type": "execution_output", "text": "<<ImageDisplayed>>"},
            metadata=meta,
        )
        assert block_types(msg) == ["text", "image"]
        assert msg.content[1]["ref"] == "attachment:file-plot1"

    def test_browsing_display_and_quotes_become_text_with_their_source_kept(
        self, tmp_path: Path
    ) -> None:
        _, browse = self.content_of(
            tmp_path,
            {"content_type": "tether_browsing_display", "result": "# Results", "summary": None},
        )
        assert text_of(browse) == "# Results"
        quote = {
            "content_type": "tether_quote",
            "url": "https://e.org",
            "domain": "e.org",
            "title": "E",
            "text": "quoted",
        }
        _, msg = self.content_of(tmp_path, quote)
        assert text_of(msg) == "quoted"
        assert (msg.metadata["url"], msg.metadata["title"]) == ("https://e.org", "E")

    def test_system_error_keeps_its_name(self, tmp_path: Path) -> None:
        _, msg = self.content_of(
            tmp_path, {"content_type": "system_error", "name": "tool_error", "text": "boom"}
        )
        assert text_of(msg) == "tool_error: boom"

    def test_thoughts_and_reasoning_recap_become_thinking_blocks(self, tmp_path: Path) -> None:
        thoughts = {
            "content_type": "thoughts",
            "thoughts": [{"summary": "Plan", "content": "first A", "finished": True}],
        }
        _, msg = self.content_of(tmp_path, thoughts)
        assert msg.content == [{"type": "thinking", "thinking": "Plan\n\nfirst A"}]
        _, recap = self.content_of(
            tmp_path, {"content_type": "reasoning_recap", "content": "Thought for 5 seconds"}
        )
        assert recap.content == [{"type": "thinking", "thinking": "Thought for 5 seconds"}]

    def test_user_editable_context_is_hidden_text(self, tmp_path: Path) -> None:
        content = {
            "content_type": "user_editable_context",
            "user_profile": "I am Ann.",
            "user_instructions": "Be brief.",
        }
        _, msg = self.content_of(tmp_path, content)
        assert msg.hidden is True
        assert text_of(msg) == "I am Ann.\n\nBe brief."

    def test_an_unknown_content_type_keeps_its_text_and_type(self, tmp_path: Path) -> None:
        _, msg = self.content_of(tmp_path, {"content_type": "sonic_webpage", "text": "page"})
        assert text_of(msg) == "page"
        assert msg.metadata["content_type"] == "sonic_webpage"

    def test_every_produced_block_validates_against_the_content_schema(
        self, tmp_path: Path
    ) -> None:
        content = {
            "content_type": "multimodal_text",
            "parts": [
                image_part("file-x"),
                "a",
                {"content_type": "audio_transcription", "text": "said"},
            ],
        }
        _, msg = self.content_of(tmp_path, content)
        assert check_blocks(msg.content, "here") == msg.content
        assert block_types(msg) == ["image", "text", "text"]


class TestExportZip:
    def make_zip(self, tmp_path: Path, raw: list[dict[str, Any]]) -> Path:
        path = tmp_path / "export.zip"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("conversations.json", json.dumps(raw))
            zf.writestr("file-AbC123-cat.png", b"\x89PNG fake")
            zf.writestr("user-1/file_00000000aa11-photo.jpeg", b"JPEG fake")
            zf.writestr("chat.html", "<html></html>")
        return path

    def test_files_inside_the_zip_become_attachments_with_their_bytes(self, tmp_path: Path) -> None:
        content = {"content_type": "multimodal_text", "parts": [image_part("file-AbC123"), "cat?"]}
        path = self.make_zip(tmp_path, [conv_with(cg_message("u", "user", content=content))])
        conv = only(path)
        assert conv.attachments[0].data == b"\x89PNG fake"
        assert conv.attachments[0].mime_type == "image/png"
        assert conv.messages[0].content[0]["ref"] == conv.attachments[0].key

    def test_new_style_sediment_pointers_find_their_files_too(self, tmp_path: Path) -> None:
        part = {
            "content_type": "image_asset_pointer",
            "asset_pointer": "sediment://file_00000000aa11",
            "width": 1,
            "height": 1,
        }
        content = {"content_type": "multimodal_text", "parts": [part]}
        conv = only(self.make_zip(tmp_path, [conv_with(cg_message("u", "user", content=content))]))
        assert conv.attachments[0].data == b"JPEG fake"
        assert conv.attachments[0].mime_type == "image/jpeg"

    def test_a_pointer_to_a_file_missing_from_the_zip_keeps_data_none(self, tmp_path: Path) -> None:
        content = {"content_type": "multimodal_text", "parts": [image_part("file-Missing")]}
        conv = only(self.make_zip(tmp_path, [conv_with(cg_message("u", "user", content=content))]))
        assert conv.attachments[0].data is None


class TestMalformedConversations:
    def good_and(self, tmp_path: Path, bad: Any) -> tuple[list[Any], list[Any]]:
        return parse_all(
            write_json(tmp_path, "c.json", [cg_branched("good-1"), bad, cg_branched("good-2")]),
            "chatgpt",
        )

    def test_a_conversation_without_mapping_is_a_parse_error_and_the_others_still_come(
        self, tmp_path: Path
    ) -> None:
        bad = cg_branched("nomap")
        del bad["mapping"]
        convs, errors = self.good_and(tmp_path, bad)
        assert [c.source_id for c in convs] == ["good-1", "good-2"]
        assert len(errors) == 1
        assert "c.json[1]" in errors[0].where and "nomap" in errors[0].where
        assert "no mapping" in errors[0].reason

    def test_a_mapping_of_the_wrong_type_is_a_parse_error(self, tmp_path: Path) -> None:
        bad = cg_branched("listmap")
        bad["mapping"] = []
        _, errors = self.good_and(tmp_path, bad)
        assert "mapping" in errors[0].reason and "an object" in errors[0].reason

    def test_parts_of_the_wrong_type_name_their_json_path(self, tmp_path: Path) -> None:
        bad = cg_branched("badparts")
        bad["mapping"]["u1"]["message"]["content"]["parts"] = "hello"
        _, errors = self.good_and(tmp_path, bad)
        assert "mapping.u1.message.content.parts" in errors[0].reason

    def test_a_time_of_the_wrong_type_names_its_place(self, tmp_path: Path) -> None:
        bad = cg_branched("badtime")
        bad["mapping"]["a1"]["message"]["create_time"] = "yesterday"
        _, errors = self.good_and(tmp_path, bad)
        assert "mapping.a1.message.create_time" in errors[0].reason

    def test_a_cycle_in_parent_links_is_a_parse_error_naming_the_ids(self, tmp_path: Path) -> None:
        bad = cg_branched("cyc")
        bad["mapping"]["u1"]["parent"] = "u2"
        convs, errors = self.good_and(tmp_path, bad)
        assert len(convs) == 2
        assert "cycle" in errors[0].reason
        assert all(i in errors[0].reason for i in ("u1", "a1", "u2"))

    def test_a_dangling_parent_id_is_a_parse_error_naming_it(self, tmp_path: Path) -> None:
        bad = cg_branched("dangle")
        bad["mapping"]["a2"]["parent"] = "nowhere"
        _, errors = self.good_and(tmp_path, bad)
        assert "a2 -> nowhere" in errors[0].reason

    def test_duplicate_node_ids_are_a_parse_error(self, tmp_path: Path) -> None:
        good = json.dumps(cg_branched("good-1"))
        node = json.dumps({"id": "u1", "message": None, "parent": None, "children": []})
        bad = json.dumps(cg_branched("dup")).replace(
            '"mapping": {', '"mapping": {"u1": ' + node + ", ", 1
        )
        path = tmp_path / "dup.json"
        path.write_text(f"[{good}, {bad}]")
        convs, errors = parse_all(path)
        assert len(convs) == 1
        assert "duplicate message ids: u1" in errors[0].reason

    def test_a_node_whose_id_differs_from_its_key_is_a_parse_error(self, tmp_path: Path) -> None:
        bad = cg_branched("mismatch")
        bad["mapping"]["u1"]["id"] = "u9"
        _, errors = self.good_and(tmp_path, bad)
        assert "mapping.u1" in errors[0].reason

    def test_a_conversation_without_any_message_is_a_parse_error(self, tmp_path: Path) -> None:
        empty = cg_conversation([("root", None, None)], conv_id="empty")
        convs, errors = self.good_and(tmp_path, empty)
        assert (
            len(convs) == 2
            and "no messages" in errors[0].reason
            and "(id empty)" in errors[0].where
        )

    def test_a_conversation_that_is_not_an_object_is_a_parse_error(self, tmp_path: Path) -> None:
        convs, errors = self.good_and(tmp_path, "not a conversation")
        assert len(convs) == 2 and "c.json[1]" in errors[0].where

    def test_a_truncated_file_yields_the_good_conversations_then_raises(
        self, tmp_path: Path
    ) -> None:
        text = json.dumps([cg_branched("a"), cg_branched("b"), cg_branched("c")])
        path = tmp_path / "cut.json"
        path.write_text(text[: len(text) - 200])
        seen = []
        with pytest.raises(InvalidInput) as info:
            for item in parse_file(path, "chatgpt"):
                assert isinstance(item, ImportedConversation)
                seen.append(item.source_id)
        assert seen == ["a", "b"]
        assert "byte" in info.value.where and "conversation index 2" in info.value.why
        assert "truncated" in info.value.why


def raw_message_nodes(conv: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k: n for k, n in conv["mapping"].items() if n.get("message")}


def raw_active_branch(conv: dict[str, Any]) -> list[str]:
    mapping, path, node = conv["mapping"], [], conv["current_node"]
    while node is not None:
        if mapping[node].get("message"):
            path.append(node)
        node = mapping[node].get("parent")
    return path[::-1]


def raw_branch_points(conv: dict[str, Any]) -> int:
    return sum(1 for n in conv["mapping"].values() if len(n.get("children") or []) >= 2)


class TestRealSamples:
    @pytest.mark.parametrize(
        ("name", "nodes", "messages", "forks"),
        [
            ("chatgpt_export_librechat_chatgpt-tree.json", 13, 12, 2),
            ("chatgpt_export_realazthat_chatgpt2graph_examples.json", 45, 44, 0),
            ("chatgpt_fixture_mitkury_example-conversation.json", 6, 6, 1),
        ],
    )
    def test_counts_branches_and_active_branch_match_the_file(
        self, name: str, nodes: int, messages: int, forks: int
    ) -> None:
        raw = load_sample(name)[0]
        assert len(raw["mapping"]) == nodes  # as SOURCES.md counts them (null root included)
        conv = only(sample(name))
        assert len(conv.messages) == messages == len(raw_message_nodes(raw))
        assert branch_points(conv) == forks == raw_branch_points(raw)
        assert len(roots(conv)) == 1
        assert parents_first(conv)
        assert active_branch(conv) == raw_active_branch(raw)
        assert conv.current_source_id == raw["current_node"]

    def test_the_librechat_tree_keeps_the_interrupted_branch(self) -> None:
        conv = only(sample("chatgpt_export_librechat_chatgpt-tree.json"))
        unfinished = [m for m in conv.messages if m.metadata.get("status") == "in_progress"]
        assert len(unfinished) == 1
        assert unfinished[0].metadata["finish_reason"] == "interrupted"
        assert unfinished[0].source_id not in active_branch(conv)
        assert by_id(conv)["d38605d2-7b2c-43de-b044-22ce472c749b"].hidden is True

    def test_the_code_interpreter_export_has_every_role_and_content_type(self) -> None:
        raw = load_sample("chatgpt_export_realazthat_chatgpt2graph_examples.json")[0]
        conv = only(sample("chatgpt_export_realazthat_chatgpt2graph_examples.json"))
        assert {m.role for m in conv.messages} == {"system", "user", "assistant", "tool"}
        kinds = {m.metadata["content_type"] for m in conv.messages}
        assert kinds == {
            n["message"]["content"]["content_type"] for n in raw_message_nodes(raw).values()
        }
        assert kinds == {"text", "code", "execution_output"}
        hidden = sum(
            1
            for n in raw_message_nodes(raw).values()
            if n["message"]["metadata"].get("is_visually_hidden_from_conversation")
        )
        assert sum(m.hidden for m in conv.messages) == hidden == 2
        assert all(m.author == "python" for m in conv.messages if m.role == "tool")

    def test_the_mitkury_fixture_follows_child_zero_not_the_last_child(self) -> None:
        conv = only(sample("chatgpt_fixture_mitkury_example-conversation.json"))
        assert children_of(conv)["msg-3"] == ["msg-4", "msg-5"]
        assert active_branch(conv) == ["msg-1", "msg-2", "msg-3", "msg-4", "msg-6"]
        assert by_id(conv)["msg-1"].role == "system" and roots(conv) == ["msg-1"]
