from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from interop_fixtures import (
    active_branch,
    branch_points,
    by_id,
    children_of,
    oasst_flat,
    oasst_node,
    oasst_tree,
    only,
    parents_first,
    parse_all,
    roots,
    sample,
    write_json,
    write_jsonl,
)

from loomdb.errors import InvalidInput
from loomdb.interop import ImportedConversation, parse_file


def tree(tree_id: str = "t1") -> dict[str, Any]:
    """A prompt with three ranked replies; the best one has a follow-up and two answers."""
    return oasst_tree(
        oasst_node(
            tree_id,
            "prompter",
            "Question?",
            [
                oasst_node(f"{tree_id}-r2", "assistant", "worst", rank=2),
                oasst_node(
                    f"{tree_id}-r0",
                    "assistant",
                    "best",
                    [
                        oasst_node(
                            f"{tree_id}-f",
                            "prompter",
                            "Follow-up?",
                            [
                                oasst_node(f"{tree_id}-f1", "assistant", "B", rank=1),
                                oasst_node(f"{tree_id}-f0", "assistant", "A", rank=0),
                            ],
                        )
                    ],
                    rank=0,
                    created_date="2023-02-08T16:29:21.052427+00:00",
                    model_name="oasst-sft",
                ),
                oasst_node(f"{tree_id}-r1", "assistant", "middle", rank=1, deleted=True),
            ],
            created_date="2023-02-08T16:00:00+00:00",
        )
    )


class TestTreeExport:
    def test_every_reply_is_a_sibling_under_its_prompt(self, tmp_path: Path) -> None:
        conv = only(write_jsonl(tmp_path, "trees.jsonl", [tree()]))
        assert len(conv.messages) == 7 and roots(conv) == ["t1"] and branch_points(conv) == 2
        assert parents_first(conv)
        assert conv.source_id == "t1"

    def test_siblings_are_ordered_by_rank_and_the_rank_is_kept(self, tmp_path: Path) -> None:
        conv = only(write_jsonl(tmp_path, "trees.jsonl", [tree()]))
        assert children_of(conv)["t1"] == ["t1-r0", "t1-r1", "t1-r2"]
        assert [by_id(conv)[i].metadata["rank"] for i in children_of(conv)["t1"]] == [0, 1, 2]

    def test_the_active_branch_follows_the_best_ranked_replies(self, tmp_path: Path) -> None:
        conv = only(write_jsonl(tmp_path, "trees.jsonl", [tree()]))
        assert active_branch(conv) == ["t1", "t1-r0", "t1-f", "t1-f0"]

    def test_roles_models_times_and_deleted_messages(self, tmp_path: Path) -> None:
        msgs = by_id(only(write_jsonl(tmp_path, "trees.jsonl", [tree()])))
        assert (msgs["t1"].role, msgs["t1-r0"].role) == ("user", "assistant")
        assert msgs["t1-r0"].model == "oasst-sft"
        assert (
            msgs["t1-r0"].created_at is not None and msgs["t1-r0"].created_at.microsecond == 52427
        )
        assert msgs["t1-r1"].hidden is True


class TestFlatExport:
    def test_flat_messages_grouped_by_tree_give_the_same_tree(self, tmp_path: Path) -> None:
        rows = oasst_flat(tree("t1")) + oasst_flat(tree("t2"))
        rows = rows[::2] + rows[1::2]  # trees interleaved, children before parents
        convs, errors = parse_all(write_jsonl(tmp_path, "messages.jsonl", rows))
        assert not errors
        nested = only(write_jsonl(tmp_path, "trees.jsonl", [tree("t1")]))
        assert [c.source_id for c in convs] == ["t1", "t2"]
        assert sorted((m.source_id, m.parent_source_id) for m in convs[0].messages) == sorted(
            (m.source_id, m.parent_source_id) for m in nested.messages
        )
        assert active_branch(convs[0]) == active_branch(nested)

    def test_a_dangling_parent_in_the_flat_export_is_a_parse_error(self, tmp_path: Path) -> None:
        rows = oasst_flat(tree("t1")) + oasst_flat(tree("t2"))
        rows[1]["parent_id"] = "ghost"
        convs, errors = parse_all(write_jsonl(tmp_path, "messages.jsonl", rows))
        assert [c.source_id for c in convs] == ["t2"]
        assert "-> ghost" in errors[0].reason and "(id t1)" in errors[0].where


class TestJsonArrays:
    def test_a_json_array_of_trees_or_of_flat_messages_is_read_too(self, tmp_path: Path) -> None:
        trees, errors = parse_all(write_json(tmp_path, "trees.json", [tree("t1"), tree("t2")]))
        assert not errors and [c.source_id for c in trees] == ["t1", "t2"]
        flat, errors = parse_all(write_json(tmp_path, "flat.json", oasst_flat(tree("t1"))))
        assert not errors and len(flat[0].messages) == 7
        assert active_branch(flat[0]) == active_branch(trees[0])


class TestMalformed:
    def test_bad_lines_are_parse_errors_and_good_trees_still_come(self, tmp_path: Path) -> None:
        cyc = tree("cyc")
        cyc["prompt"]["replies"][0]["message_id"] = "cyc"
        wrong = tree("wrong")
        wrong["prompt"]["role"] = "oracle"
        path = write_jsonl(tmp_path, "trees.jsonl", [tree("ok1"), cyc, wrong, tree("ok2")])
        path.write_text(path.read_text() + "{not json}\n" + json.dumps(tree("ok3")) + "\n")
        convs, errors = parse_all(path)
        assert [c.source_id for c in convs] == ["ok1", "ok2", "ok3"]
        assert "duplicate message ids: cyc" in errors[0].reason
        assert "prompt.role" in errors[1].reason
        assert "line 5" in errors[2].where

    def test_a_truncated_last_line_raises_after_the_good_trees(self, tmp_path: Path) -> None:
        path = write_jsonl(tmp_path, "trees.jsonl", [tree("a"), tree("b")])
        path.write_text(path.read_text()[:-40])
        seen = []
        with pytest.raises(InvalidInput) as info:
            for conv in parse_file(path):
                assert isinstance(conv, ImportedConversation)
                seen.append(conv.source_id)
        assert seen == ["a"]
        assert "line 2" in info.value.where and "byte" in info.value.where


def walk(node: dict[str, Any]) -> list[dict[str, Any]]:
    out, stack = [], [node]
    while stack:
        item = stack.pop()
        out.append(item)
        stack.extend(item.get("replies", []))
    return out


class TestRealSample:
    def test_each_tree_matches_its_line(self) -> None:
        lines = [
            json.loads(x)
            for x in sample("oasst_en_first10_trees.jsonl").read_text().splitlines()
            if x.strip()
        ]
        convs, errors = parse_all(sample("oasst_en_first10_trees.jsonl"))
        assert not errors and len(convs) == len(lines) == 10
        for conv, line in zip(convs, lines, strict=True):
            nodes = walk(line["prompt"])
            assert conv.source_id == line["message_tree_id"]
            assert len(conv.messages) == len(nodes)
            assert branch_points(conv) == sum(1 for n in nodes if len(n["replies"]) >= 2)
            assert roots(conv) == [line["prompt"]["message_id"]] and parents_first(conv)
            assert {m.role for m in conv.messages} <= {"user", "assistant"}
            path = active_branch(conv)
            assert path[0] == line["prompt"]["message_id"] and not children_of(conv).get(path[-1])

    def test_many_nodes_have_several_replies(self) -> None:
        convs, _ = parse_all(sample("oasst_en_first10_trees.jsonl"))
        assert sum(len(c.messages) for c in convs) == 106
        assert sum(branch_points(c) for c in convs) >= 10
