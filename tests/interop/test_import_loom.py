from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from interop_fixtures import (
    active_branch,
    branch_points,
    by_id,
    loom_node,
    only,
    parents_first,
    parse_all,
    roots,
    text_of,
    write_json,
)

from loomdb.errors import InvalidInput
from loomdb.interop import parse_file


def save(**extra: Any) -> dict[str, Any]:
    """An old-style save: the root has no id; AI and human pieces; tags and a bookmark."""
    root = loom_node(
        None,
        "Once upon",
        [
            loom_node(
                "a1",
                " a time",
                [loom_node("a2", " there was", meta={"source": "prompt"})],
                meta={"source": "AI", "creation_timestamp": "2023-02-13-20.57.56"},
                tags=["bookmark", "demo"],
                generation={"id": "cmpl-1", "index": 0},
            ),
            loom_node("b1", " midnight", bookmark=True, meta={"source": "mixed", "modified": True}),
        ],
        mutable=False,
    )
    return {
        "root": root,
        "selected_node_id": "a2",
        "model_responses": {"cmpl-1": {"model": "davinci-002"}},
        **extra,
    }


class TestTree:
    def test_nested_children_become_a_buffer_tree(self, tmp_path: Path) -> None:
        conv = only(write_json(tmp_path, "story.json", save()))
        assert conv.mode == "buffer" and conv.source_format == "loom"
        assert len(conv.messages) == 4 and len(roots(conv)) == 1 and branch_points(conv) == 1
        assert parents_first(conv)
        assert conv.title == "story"

    def test_node_text_along_the_selected_path_concatenates_into_the_document(
        self, tmp_path: Path
    ) -> None:
        conv = only(write_json(tmp_path, "story.json", save()))
        msgs = by_id(conv)
        assert (
            "".join(text_of(msgs[i]) for i in active_branch(conv)) == "Once upon a time there was"
        )
        assert conv.current_source_id == "a2"

    def test_generated_nodes_are_assistant_and_written_ones_are_user(self, tmp_path: Path) -> None:
        msgs = by_id(only(write_json(tmp_path, "story.json", save())))
        assert [msgs[i].role for i in ("a1", "a2", "b1")] == ["assistant", "user", "assistant"]
        assert msgs["b1"].metadata == {"source": "mixed", "edited": True}

    def test_tags_and_bookmarks_are_kept(self, tmp_path: Path) -> None:
        msgs = by_id(only(write_json(tmp_path, "story.json", save(canonical=["a2"]))))
        assert msgs["a1"].tags == ["demo"] and msgs["a1"].bookmark == "loom-a1"
        assert msgs["b1"].bookmark == "loom-b1"
        assert msgs["a2"].tags == ["canonical"] and msgs["a2"].bookmark is None

    def test_times_and_models_come_from_meta_and_stored_responses(self, tmp_path: Path) -> None:
        msgs = by_id(only(write_json(tmp_path, "story.json", save())))
        assert msgs["a1"].created_at == datetime(2023, 2, 13, 20, 57, 56, tzinfo=UTC)
        assert msgs["a1"].model == "davinci-002"

    def test_a_root_without_id_gets_a_stable_one(self, tmp_path: Path) -> None:
        one = only(write_json(tmp_path, "s1.json", save()))
        two = only(write_json(tmp_path, "s2.json", save()))
        assert roots(one) == roots(two) and roots(one)[0].endswith("/root")

    def test_an_unknown_selected_node_leaves_no_active_leaf(self, tmp_path: Path) -> None:
        conv = only(write_json(tmp_path, "story.json", save(selected_node_id="gone")))
        assert conv.current_source_id is None and "gone" in conv.metadata["selected_node_id"]

    @pytest.mark.parametrize("root_id", ['"id": "n0", ', ""])
    def test_a_very_deep_save_does_not_recurse(self, tmp_path: Path, root_id: str) -> None:
        depth = 5000
        text = '{"root": {' + root_id + '"text": "x", "children": ['
        text += '{"text": "x", "children": [' * depth + "]}" * depth + "]}}"
        path = tmp_path / "deep.json"
        path.write_text(text)
        conv = only(path)
        assert len(conv.messages) == depth + 1
        assert conv.messages[-1].parent_source_id == conv.messages[-2].source_id


class TestMalformed:
    def test_duplicate_ids_are_a_parse_error(self, tmp_path: Path) -> None:
        raw = save()
        raw["root"]["children"][1]["id"] = "a1"
        convs, errors = parse_all(write_json(tmp_path, "story.json", raw))
        assert convs == [] and "duplicate message ids: a1" in errors[0].reason

    def test_children_of_the_wrong_type_name_their_path(self, tmp_path: Path) -> None:
        raw = save()
        raw["root"]["children"][0]["children"] = "none"
        _, errors = parse_all(write_json(tmp_path, "story.json", raw))
        assert "node a1.children" in errors[0].reason

    def test_a_truncated_save_raises_invalid_input(self, tmp_path: Path) -> None:
        path = write_json(tmp_path, "story.json", save())
        path.write_text(path.read_text()[:-30])
        with pytest.raises(InvalidInput, match="truncated"):
            list(parse_file(path, "loom"))
