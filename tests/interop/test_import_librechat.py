from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from interop_fixtures import (
    NO_PARENT,
    active_branch,
    block_types,
    branch_points,
    by_id,
    lc_export,
    lc_message,
    load_sample,
    only,
    parents_first,
    parse_all,
    roots,
    sample,
    write_json,
)


def flat(conv_id: str = "lc-conv") -> dict:
    return lc_export(
        [
            lc_message("u1", NO_PARENT, True, "hello", createdAt="2024-05-01T10:00:00.000Z"),
            lc_message("a1", "u1", False, "hi", createdAt="2024-05-01T10:00:01.000Z"),
            lc_message("a2", "u1", False, "hey", createdAt="2024-05-01T10:00:09.000Z"),
            lc_message("u2", "a1", True, "more", createdAt="2024-05-01T10:00:02.000Z"),
        ],
        conv_id,
    )


def nest(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The recursive export form: replies nested in `children`."""
    table = {m["messageId"]: {**m, "children": []} for m in messages}
    top: list[dict[str, Any]] = []
    for m in messages:
        parent = table.get(m["parentMessageId"])
        (parent["children"] if parent else top).append(table[m["messageId"]])
    return top


class TestFlatExport:
    def test_parent_message_ids_build_the_tree_from_the_zero_root(self, tmp_path: Path) -> None:
        conv = only(write_json(tmp_path, "lc.json", flat()))
        assert roots(conv) == ["u1"]
        assert branch_points(conv) == 1
        assert [m.role for m in conv.messages] == ["user", "assistant", "user", "assistant"]
        assert (conv.source_id, conv.title, conv.system) == (
            "lc-conv",
            "LibreChat chat",
            "Be brief.",
        )

    def test_the_newest_leaf_is_active_because_librechat_does_not_record_one(
        self, tmp_path: Path
    ) -> None:
        conv = only(write_json(tmp_path, "lc.json", flat()))
        assert conv.current_source_id == "a2"
        assert active_branch(conv) == ["u1", "a2"]
        assert conv.metadata["current_chosen_by"] == "newest_leaf"

    def test_times_models_and_senders_are_read(self, tmp_path: Path) -> None:
        conv = only(write_json(tmp_path, "lc.json", flat()))
        a1 = by_id(conv)["a1"]
        assert a1.created_at == datetime(2024, 5, 1, 10, 0, 1, tzinfo=UTC)
        assert (a1.model, a1.author) == ("gpt-4o", "GPT-4")

    def test_agent_content_parts_become_text_thinking_and_tool_blocks(self, tmp_path: Path) -> None:
        parts = [
            {"type": "think", "think": "hmm"},
            {
                "type": "tool_call",
                "tool_call": {"id": "t1", "name": "calc", "args": '{"x": 1}', "output": "2"},
            },
            {"type": "text", "text": "two"},
        ]
        msg = lc_message("a", NO_PARENT, False, "", content=parts)
        conv = only(write_json(tmp_path, "lc.json", lc_export([msg])))
        assert block_types(conv.messages[0]) == ["thinking", "tool_use", "tool_result", "text"]
        assert conv.messages[0].content[1]["input"] == {"x": 1}


class TestRecursiveExport:
    def test_nested_children_give_the_same_tree_as_the_flat_form(self, tmp_path: Path) -> None:
        nested = flat()
        nested["messages"] = nest(nested["messages"])
        nested["recursive"] = True
        a = only(write_json(tmp_path, "flat.json", flat()))
        b = only(write_json(tmp_path, "nested.json", nested))
        assert [(m.source_id, m.parent_source_id) for m in a.messages] == [
            (m.source_id, m.parent_source_id) for m in b.messages
        ]


class TestMalformed:
    def test_bad_exports_are_parse_errors_and_good_ones_still_come(self, tmp_path: Path) -> None:
        cyc = flat("cyc")
        cyc["messages"][0]["parentMessageId"] = "u2"
        dangling = flat("dangling")
        dangling["messages"][3]["parentMessageId"] = "ghost"
        dup = flat("dup")
        dup["messages"][3]["messageId"] = "a1"
        wrong = flat("wrong")
        wrong["messages"][1]["text"] = ["not", "text"]
        convs, errors = parse_all(
            write_json(tmp_path, "lc.json", [flat("ok"), cyc, dangling, dup, wrong]), "librechat"
        )
        assert [c.source_id for c in convs] == ["ok"]
        assert "cycle" in errors[0].reason
        assert "u2 -> ghost" in errors[1].reason
        assert "duplicate message ids: a1" in errors[2].reason
        assert "messages[1].text" in errors[3].reason and "(id wrong)" in errors[3].where


def walk(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out, stack = [], list(reversed(items))
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(node.get("children", [])))
    return out


class TestRealSample:
    def test_nine_messages_two_forks_and_one_root(self) -> None:
        raw = load_sample("librechat_export_librechat-tree.json")
        nodes = walk(raw["messages"])
        conv = only(sample("librechat_export_librechat-tree.json"))
        assert len(conv.messages) == len(nodes) == 9
        assert branch_points(conv) == sum(1 for n in nodes if len(n.get("children", [])) >= 2) == 2
        assert roots(conv) == [raw["messages"][0]["messageId"]]
        assert parents_first(conv)
        assert [m.role for m in conv.messages] == [
            "user" if n["isCreatedByUser"] else "assistant" for n in nodes
        ]
        assert conv.system == raw["options"]["promptPrefix"]
        assert conv.current_source_id in {n["messageId"] for n in nodes if not n.get("children")}
