from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from interop_fixtures import (
    NO_PARENT,
    cg_branched,
    claude_conversation,
    claude_message,
    lc_export,
    lc_message,
    loom_node,
    oasst_flat,
    oasst_node,
    oasst_tree,
    owui_chat,
    owui_message,
    parse_all,
    sample,
    write_json,
    write_jsonl,
)

from loomdb.errors import InvalidInput
from loomdb.interop import FORMATS, open_source, parse_file

TREE = oasst_tree(oasst_node("t", "prompter", "q", [oasst_node("r", "assistant", "a", rank=0)]))

#: (format, file name with a misleading or neutral extension, content, JSON lines?)
CASES: list[tuple[str, Any, bool]] = [
    ("chatgpt", [cg_branched()], False),
    ("chatgpt", cg_branched(), False),
    ("claude", [claude_conversation("c", [claude_message("m", "human", "hi")])], False),
    ("openwebui", [owui_chat([owui_message("u", None, "user", "hi")], "u")], False),
    ("openwebui", owui_chat([owui_message("u", None, "user", "hi")], "u", wrapped=False), False),
    ("librechat", lc_export([lc_message("u", NO_PARENT, True, "hi")]), False),
    ("librechat", [lc_export([lc_message("u", NO_PARENT, True, "hi")])], False),
    ("loom", {"root": loom_node(None, "Once", [loom_node("a", " upon")])}, False),
    ("oasst", [TREE, TREE], True),
    ("oasst", oasst_flat(TREE), True),
    ("oasst", oasst_flat(TREE), False),
    ("openai_jsonl", [{"messages": [{"role": "user", "content": "hi"}]}] * 2, True),
    ("sharegpt", [{"conversations": [{"from": "human", "value": "hi"}]}], False),
    ("sharegpt", [{"messages": [{"role": "user", "content": "hi"}], "images": []}], False),
]


class TestDetection:
    @pytest.mark.parametrize(("fmt", "content", "lines"), CASES)
    def test_the_format_is_found_from_the_structure_not_the_name(
        self, tmp_path: Path, fmt: str, content: Any, lines: bool
    ) -> None:
        path = tmp_path / "export.dat"
        if lines:
            path.write_text("".join(json.dumps(r) + "\n" for r in content))
        else:
            path.write_text(json.dumps(content, indent=1))
        found, _ = open_source(path)
        assert found == fmt
        convs, errors = parse_all(path)
        assert convs and not errors

    @pytest.mark.parametrize(
        ("name", "fmt"),
        [
            ("chatgpt_export_librechat_chatgpt-tree.json", "chatgpt"),
            ("chatgpt_export_realazthat_chatgpt2graph_examples.json", "chatgpt"),
            ("chatgpt_fixture_mitkury_example-conversation.json", "chatgpt"),
            ("claude_export_first10.json", "claude"),
            ("librechat_export_librechat-tree.json", "librechat"),
            ("oasst_en_first10_trees.jsonl", "oasst"),
            ("openwebui_export_openwebui-importer_webui-json.json", "openwebui"),
            ("sharegpt_llamafactory_mllm_demo.json", "sharegpt"),
        ],
    )
    def test_every_real_sample_is_recognised(self, name: str, fmt: str) -> None:
        assert open_source(sample(name))[0] == fmt

    def test_a_zip_is_opened_at_its_conversations_json(self, tmp_path: Path) -> None:
        path = tmp_path / "export.zip"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("chat.html", "<html/>")
            zf.writestr("conversations.json", json.dumps([cg_branched()]))
        fmt, inp = open_source(path)
        assert (fmt, inp.member) == ("chatgpt", "conversations.json")

    def test_a_zip_with_one_jsonl_file_is_opened_at_it(self, tmp_path: Path) -> None:
        path = tmp_path / "dataset.zip"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("data/train.jsonl", json.dumps(TREE) + "\n")
        assert open_source(path)[0] == "oasst"
        assert len(parse_all(path)[0]) == 1

    def test_a_zip_without_an_export_is_invalid_input(self, tmp_path: Path) -> None:
        path = tmp_path / "photos.zip"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("a.png", b"x")
        with pytest.raises(InvalidInput, match="conversations.json"):
            open_source(path)

    @pytest.mark.parametrize("lines", [False, True])
    def test_a_utf8_byte_order_mark_is_ignored(self, tmp_path: Path, lines: bool) -> None:
        path = tmp_path / "bom.json"
        body = (
            json.dumps(TREE) + "\n" + json.dumps(TREE) + "\n"
            if lines
            else json.dumps([cg_branched()])
        )
        path.write_bytes(b"\xef\xbb\xbf" + body.encode())
        assert open_source(path)[0] == ("oasst" if lines else "chatgpt")
        convs, errors = parse_all(path)
        assert convs and not errors

    def test_an_explicit_format_skips_detection(self, tmp_path: Path) -> None:
        path = write_json(tmp_path, "x.json", [{"messages": [{"role": "user", "content": "hi"}]}])
        assert next(parse_file(path, "sharegpt")).source_format == "sharegpt"  # type: ignore[union-attr]


class TestUnknownInput:
    def test_an_unknown_structure_lists_the_supported_formats(self, tmp_path: Path) -> None:
        path = write_json(tmp_path, "x.json", [{"hello": "world"}])
        with pytest.raises(InvalidInput) as info:
            open_source(path)
        assert all(name in info.value.why for name in FORMATS)

    def test_an_unknown_format_name_lists_the_supported_ones(self, tmp_path: Path) -> None:
        path = write_json(tmp_path, "x.json", [])
        with pytest.raises(InvalidInput) as info:
            parse_file(path, "myspace")
        assert info.value.where == "format" and "chatgpt" in info.value.why

    @pytest.mark.parametrize(
        ("content", "why"),
        [("", "empty"), ("hello there", "not JSON"), ('[{"mapping": {', "truncated")],
    )
    def test_files_that_are_not_json_are_invalid_input(
        self, tmp_path: Path, content: str, why: str
    ) -> None:
        path = tmp_path / "x.json"
        path.write_text(content)
        with pytest.raises(InvalidInput, match=why):
            list(parse_file(path))

    def test_a_missing_file_is_invalid_input(self, tmp_path: Path) -> None:
        with pytest.raises(InvalidInput, match="no such file"):
            open_source(tmp_path / "nope.json")

    def test_a_truncated_single_object_is_invalid_input(self, tmp_path: Path) -> None:
        path = write_json(tmp_path, "c.json", cg_branched())
        path.write_text(path.read_text()[:-50])
        with pytest.raises(InvalidInput, match="truncated"):
            list(parse_file(path))


class TestStableIds:
    @pytest.mark.parametrize(
        "name",
        [
            p
            for p in (
                "chatgpt_export_librechat_chatgpt-tree.json",
                "claude_export_first10.json",
                "librechat_export_librechat-tree.json",
                "oasst_en_first10_trees.jsonl",
                "openwebui_export_openwebui-importer_webui-json.json",
                "sharegpt_llamafactory_mllm_demo.json",
            )
        ],
    )
    def test_parsing_the_same_file_twice_gives_the_same_ids(self, name: str) -> None:
        def ids() -> list[tuple[str, list[str]]]:
            return [
                (c.source_id, [m.source_id for m in c.messages]) for c in parse_all(sample(name))[0]
            ]

        first = ids()
        assert first == ids()
        assert len({conv for conv, _ in first}) == len(first)

    def test_a_reformatted_jsonl_line_keeps_its_id(self, tmp_path: Path) -> None:
        line = {
            "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
        }
        compact = write_jsonl(tmp_path, "a.jsonl", [line])
        spaced = tmp_path / "b.jsonl"
        spaced.write_text(json.dumps(line, separators=(" , ", " : ")) + "\n")
        assert parse_all(compact)[0][0].source_id == parse_all(spaced)[0][0].source_id
