from __future__ import annotations

import json
import zipfile
from datetime import UTC, datetime
from pathlib import Path

from interop_fixtures import (
    active_branch,
    block_types,
    branch_points,
    by_id,
    claude_conversation,
    claude_message,
    load_sample,
    only,
    parents_first,
    parse_all,
    roots,
    sample,
    text_of,
    write_json,
)

from loomdb.interop import open_source


def linear(uuid: str = "c1") -> dict:
    return claude_conversation(
        uuid,
        [
            claude_message("m1", "human", "Hi Claude"),
            claude_message("m2", "assistant", "Hello!"),
            claude_message("m3", "human", "Thanks"),
            claude_message("m4", "assistant", "Any time."),
        ],
    )


class TestLinearConversations:
    def test_messages_chain_in_list_order_when_there_are_no_parent_links(
        self, tmp_path: Path
    ) -> None:
        conv = only(write_json(tmp_path, "conversations.json", [linear()]))
        assert [m.parent_source_id for m in conv.messages] == [None, "m1", "m2", "m3"]
        assert conv.current_source_id == "m4"
        assert branch_points(conv) == 0

    def test_senders_become_roles_and_times_are_utc(self, tmp_path: Path) -> None:
        conv = only(write_json(tmp_path, "conversations.json", [linear()]))
        assert [m.role for m in conv.messages] == ["user", "assistant", "user", "assistant"]
        assert conv.messages[0].created_at == datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
        assert (conv.title, conv.source_id, conv.source_format) == ("Chat", "c1", "claude")

    def test_the_flat_text_field_is_the_fallback_when_content_is_empty(
        self, tmp_path: Path
    ) -> None:
        msg = claude_message("m1", "human", "")
        msg["text"] = "old style"
        conv = only(write_json(tmp_path, "conversations.json", [claude_conversation("c", [msg])]))
        assert text_of(conv.messages[0]) == "old style"


class TestBranches:
    def test_parent_message_uuid_builds_the_tree(self, tmp_path: Path) -> None:
        root = "00000000-0000-4000-8000-000000000000"
        msgs = [
            claude_message("q", "human", "Q", parent_message_uuid=root),
            claude_message(
                "a1", "assistant", "A1", parent_message_uuid="q", created_at="2024-05-01T10:00:01Z"
            ),
            claude_message(
                "a2", "assistant", "A2", parent_message_uuid="q", created_at="2024-05-01T10:00:05Z"
            ),
        ]
        conv = only(write_json(tmp_path, "conversations.json", [claude_conversation("c", msgs)]))
        assert roots(conv) == ["q"]
        assert branch_points(conv) == 1
        assert conv.current_source_id == "a2"
        assert active_branch(conv) == ["q", "a2"]

    def test_current_leaf_message_uuid_picks_the_active_branch(self, tmp_path: Path) -> None:
        msgs = [
            claude_message(
                "q", "human", "Q", parent_message_uuid="00000000-0000-4000-8000-000000000000"
            ),
            claude_message("a1", "assistant", "A1", parent_message_uuid="q"),
            claude_message("a2", "assistant", "A2", parent_message_uuid="q"),
        ]
        raw = claude_conversation("c", msgs)
        raw["current_leaf_message_uuid"] = "a1"
        assert only(write_json(tmp_path, "conversations.json", [raw])).current_source_id == "a1"


class TestContentBlocks:
    def test_text_thinking_tool_use_and_tool_result_blocks_are_kept(self, tmp_path: Path) -> None:
        content = [
            {"type": "thinking", "thinking": "Let me look."},
            {"type": "tool_use", "name": "web_search", "input": {"query": "loom"}},
            {
                "type": "tool_result",
                "name": "web_search",
                "content": [{"type": "text", "text": "found"}],
                "is_error": False,
            },
            {"type": "text", "text": "Here it is."},
        ]
        msg = claude_message("m", "assistant", "", content=content)
        conv = only(write_json(tmp_path, "conversations.json", [claude_conversation("c", [msg])]))
        blocks = conv.messages[0].content
        assert block_types(conv.messages[0]) == ["thinking", "tool_use", "tool_result", "text"]
        assert blocks[2]["tool_use_id"] == blocks[1]["id"]
        assert blocks[2]["content"] == [{"type": "text", "text": "found"}]

    def test_attachments_become_documents_holding_their_extracted_text(
        self, tmp_path: Path
    ) -> None:
        att = {
            "file_name": "notes.txt",
            "file_size": 5,
            "file_type": "txt",
            "extracted_content": "hello",
        }
        msg = claude_message("m", "human", "see file", attachments=[att])
        conv = only(write_json(tmp_path, "conversations.json", [claude_conversation("c", [msg])]))
        doc = conv.messages[0].content[0]
        assert (doc["type"], doc["text"], doc["name"]) == ("document", "hello", "notes.txt")
        assert conv.attachments[0].data == b"hello"
        assert doc["ref"] == conv.attachments[0].key

    def test_files_are_referenced_without_bytes(self, tmp_path: Path) -> None:
        msg = claude_message("m", "human", "look", files=[{"file_name": "photo.png"}])
        conv = only(write_json(tmp_path, "conversations.json", [claude_conversation("c", [msg])]))
        assert block_types(conv.messages[0]) == ["image", "text"]
        assert conv.attachments[0].data is None and conv.attachments[0].mime_type == "image/png"


class TestMalformed:
    def test_a_bad_conversation_is_a_parse_error_and_the_good_ones_still_come(
        self, tmp_path: Path
    ) -> None:
        bad = linear("bad")
        bad["chat_messages"][1]["sender"] = "robot"
        wrong = linear("wrong")
        wrong["chat_messages"] = "nope"
        convs, errors = parse_all(
            write_json(tmp_path, "conversations.json", [linear("a"), bad, wrong, linear("b")])
        )
        assert [c.source_id for c in convs] == ["a", "b"]
        assert "chat_messages[1].sender" in errors[0].reason and "(id bad)" in errors[0].where
        assert "chat_messages" in errors[1].reason and "an array" in errors[1].reason

    def test_an_empty_chat_is_a_parse_error(self, tmp_path: Path) -> None:
        convs, errors = parse_all(
            write_json(tmp_path, "conversations.json", [claude_conversation("e", []), linear()])
        )
        assert len(convs) == 1 and "no messages" in errors[0].reason

    def test_duplicate_dangling_and_cyclic_links_are_parse_errors(self, tmp_path: Path) -> None:
        dup = linear("dup")
        dup["chat_messages"][2]["uuid"] = "m1"
        dangling = claude_conversation(
            "dangling", [claude_message("x", "human", "x", parent_message_uuid="ghost")]
        )
        cyc = claude_conversation(
            "cyc",
            [
                claude_message("x", "human", "x", parent_message_uuid="y"),
                claude_message("y", "assistant", "y", parent_message_uuid="x"),
            ],
        )
        convs, errors = parse_all(write_json(tmp_path, "conversations.json", [dup, dangling, cyc]))
        assert convs == []
        assert "duplicate message ids: m1" in errors[0].reason
        assert "x -> ghost" in errors[1].reason
        assert "cycle" in errors[2].reason and "x" in errors[2].reason


class TestExportZip:
    def test_a_claude_zip_is_recognised_by_its_content(self, tmp_path: Path) -> None:
        path = tmp_path / "data-2025.zip"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("conversations.json", json.dumps([linear()]))
            zf.writestr("users.json", "[]")
        fmt, _ = open_source(path)
        assert fmt == "claude"
        assert len(only(path).messages) == 4


class TestRealSample:
    def test_every_conversation_and_message_of_the_sample_is_imported(self) -> None:
        raw = load_sample("claude_export_first10.json")
        convs, errors = parse_all(sample("claude_export_first10.json"))
        assert not errors
        assert [c.source_id for c in convs] == [c["uuid"] for c in raw]
        for conv, source in zip(convs, raw, strict=True):
            assert len(conv.messages) == len(source["chat_messages"])
            assert [m.source_id for m in conv.messages] == [
                m["uuid"] for m in source["chat_messages"]
            ]
            assert branch_points(conv) == 0 and len(roots(conv)) == 1 and parents_first(conv)
            assert conv.current_source_id == source["chat_messages"][-1]["uuid"]
            assert [m.role for m in conv.messages] == [
                {"human": "user", "assistant": "assistant"}[m["sender"]]
                for m in source["chat_messages"]
            ]

    def test_the_sample_has_66_messages_over_10_conversations(self) -> None:
        convs, _ = parse_all(sample("claude_export_first10.json"))
        assert len(convs) == 10
        assert sum(len(c.messages) for c in convs) == 66
        assert by_id(convs[0])["dc132b7f-77b1-46ab-8dc4-5c2ac2b6d531"].created_at == datetime(
            2024, 3, 13, 14, 48, 44, 500345, tzinfo=UTC
        )
