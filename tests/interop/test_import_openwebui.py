from __future__ import annotations

import base64
from datetime import UTC, datetime
from pathlib import Path

from interop_fixtures import (
    active_branch,
    block_types,
    branch_points,
    by_id,
    children_of,
    load_sample,
    only,
    owui_chat,
    owui_message,
    parents_first,
    parse_all,
    roots,
    sample,
    text_of,
    write_json,
)


def branched(chat_id: str = "chat-1", current: str | None = "a2") -> dict:
    return owui_chat(
        [
            owui_message("u1", None, "user", "hello", ts=100),
            owui_message("a1", "u1", "assistant", "hi", ts=101, model="llama3"),
            owui_message("a2", "u1", "assistant", "hey", ts=102, model="llama3"),
        ],
        current=current,
        chat_id=chat_id,
    )


class TestHistoryTree:
    def test_history_messages_build_the_tree_and_current_id_is_active(self, tmp_path: Path) -> None:
        conv = only(write_json(tmp_path, "chats.json", [branched()]))
        assert len(conv.messages) == 3
        assert roots(conv) == ["u1"]
        assert branch_points(conv) == 1
        assert active_branch(conv) == ["u1", "a2"]
        assert children_of(conv)["u1"] == ["a1", "a2"]

    def test_roles_models_and_second_timestamps_are_read(self, tmp_path: Path) -> None:
        conv = only(write_json(tmp_path, "chats.json", [branched()]))
        a1 = by_id(conv)["a1"]
        assert (a1.role, a1.model) == ("assistant", "llama3")
        assert a1.created_at == datetime.fromtimestamp(101, UTC)
        assert conv.created_at == datetime.fromtimestamp(1_744_577_557, UTC)

    def test_a_bare_chat_object_and_a_list_of_records_both_parse(self, tmp_path: Path) -> None:
        bare = only(write_json(tmp_path, "one.json", branched()["chat"]))
        listed = only(write_json(tmp_path, "many.json", [branched()]))
        assert bare.source_id == listed.source_id == "chat-1"

    def test_a_missing_current_id_picks_the_newest_leaf(self, tmp_path: Path) -> None:
        conv = only(write_json(tmp_path, "chats.json", [branched(current=None)]))
        assert conv.current_source_id == "a2"
        assert conv.metadata["current_chosen_by"] == "newest_leaf"

    def test_the_flat_messages_list_is_used_when_there_is_no_history(self, tmp_path: Path) -> None:
        chat = branched()["chat"]
        del chat["history"]
        conv = only(write_json(tmp_path, "chat.json", chat))
        assert len(conv.messages) == 3 and roots(conv) == ["u1"]


class TestContent:
    def test_folded_reasoning_becomes_a_thinking_block(self, tmp_path: Path) -> None:
        text = '<details type="reasoning" done="true" duration="2">\n<summary>Thought for 2 seconds</summary>\n> step one\n> step two\n</details>\nThe answer.'
        chat = owui_chat(
            [owui_message("u", None, "user", "q"), owui_message("a", "u", "assistant", text)],
            current="a",
        )
        msg = by_id(only(write_json(tmp_path, "c.json", [chat])))["a"]
        assert msg.content == [
            {"type": "thinking", "thinking": "step one\nstep two"},
            {"type": "text", "text": "The answer."},
        ]

    def test_data_url_images_become_attachments_with_bytes(self, tmp_path: Path) -> None:
        url = "data:image/png;base64," + base64.b64encode(b"PNGDATA").decode()
        chat = owui_chat(
            [owui_message("u", None, "user", "what?", files=[{"type": "image", "url": url}])],
            current="u",
        )
        conv = only(write_json(tmp_path, "c.json", [chat]))
        assert block_types(conv.messages[0]) == ["image", "text"]
        assert (
            conv.attachments[0].data == b"PNGDATA" and conv.attachments[0].mime_type == "image/png"
        )


class TestMalformed:
    def test_bad_chats_are_parse_errors_and_good_ones_still_come(self, tmp_path: Path) -> None:
        cyc = branched("cyc")
        cyc["chat"]["history"]["messages"]["u1"]["parentId"] = "a1"
        dangling = branched("dangling")
        dangling["chat"]["history"]["messages"]["a1"]["parentId"] = "ghost"
        wrong = branched("wrong")
        wrong["chat"]["history"]["messages"]["a1"]["content"] = 42
        convs, errors = parse_all(
            write_json(tmp_path, "c.json", [branched("ok1"), cyc, dangling, wrong, branched("ok2")])
        )
        assert [c.source_id for c in convs] == ["ok1", "ok2"]
        assert "cycle" in errors[0].reason and "(id cyc)" in errors[0].where
        assert "a1 -> ghost" in errors[1].reason
        assert "history.messages.a1.content" in errors[2].reason

    def test_duplicate_message_ids_are_a_parse_error(self, tmp_path: Path) -> None:
        raw = write_json(tmp_path, "c.json", [branched("dup")]).read_text()
        raw = raw.replace(
            '"messages": {"u1":',
            '"messages": {"a1": {"id": "a1", "parentId": null, "role": "user", "content": "x"}, "u1":',
            1,
        )
        path = tmp_path / "d.json"
        path.write_text(raw)
        convs, errors = parse_all(path)
        assert convs == []
        assert "duplicate message ids: a1" in errors[0].reason


class TestRealSample:
    def test_the_sample_chat_matches_its_history(self) -> None:
        raw = load_sample("openwebui_export_openwebui-importer_webui-json.json")
        conv = only(sample("openwebui_export_openwebui-importer_webui-json.json"))
        history = raw["history"]["messages"]
        assert len(conv.messages) == len(history) == 2
        assert conv.current_source_id == raw["history"]["currentId"]
        assert parents_first(conv) and branch_points(conv) == 0 and len(roots(conv)) == 1
        assert [m.role for m in conv.messages] == ["user", "assistant"]
        assert conv.title == raw["title"]
        assert by_id(conv)[raw["history"]["currentId"]].model == "deepseek/deepseek-chat:free"
        assert text_of(conv.messages[0]) == history[conv.messages[0].source_id]["content"]

    def test_a_chat_with_an_empty_id_gets_a_stable_content_hash(self) -> None:
        first = only(sample("openwebui_export_openwebui-importer_webui-json.json"))
        again = only(sample("openwebui_export_openwebui-importer_webui-json.json"))
        assert first.source_id.startswith("sha256:") and first.source_id == again.source_id
