"""Four shapes loomdb used to lose: OpenAssistant message nodes, Chatbot UI exports,
LibreChat's `messagesTree` export and a ChatGPT conversation fragment. Each is built from
a real sample in tests/fixtures/interop (or the format's documented structure) and
imported into a real store of each backend; counts come from the files themselves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from interop_fixtures import load_sample, sample, write_json

from loomdb import Loom
from loomdb.interop import detect
from loomdb.interop.stream import Input


def count_nested(message: dict[str, Any]) -> int:
    return 1 + sum(count_nested(r) for r in message.get("replies") or [])


def all_nodes(loom: Loom) -> list[Any]:
    return [n for t in loom.trees() for n in loom.tree_nodes(t.id)]


class TestOpenAssistantMessageNodes:
    def node_lines(self) -> list[dict[str, Any]]:
        lines = sample("oasst_en_first10_trees.jsonl").read_text(encoding="utf-8").splitlines()
        return [json.loads(line)["prompt"] for line in lines]

    def test_one_tree_per_root_with_every_reply(self, loom: Loom, tmp_path: Path) -> None:
        roots = self.node_lines()
        path = tmp_path / "messages.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in roots), encoding="utf-8")
        assert detect(Input(path)) == "oasst"
        report = loom.import_file(path)
        assert report.errors == [] and report.warnings == []
        held = sum(count_nested(r) for r in roots)
        assert held > 10 * 5  # replies nest several levels deep
        assert len(loom.trees()) == len(roots) == 10
        assert report.nodes == len(all_nodes(loom)) == held
        for tree in loom.trees():
            assert loom.versions(tree.root) == [tree.root]  # no root is a version of another
        assert loom.import_file(path).nodes == 0

    def test_an_import_that_holds_another_count_than_the_file_says_so(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        roots = self.node_lines()[:2]
        flat = {k: v for k, v in roots[0].items() if k != "replies"}
        flat.update(parent_id=None, message_tree_id="t-1")
        nested = {**roots[1], "parent_id": None, "message_tree_id": "t-1"}
        path = tmp_path / "mixed.jsonl"  # a flat export whose second line nests replies
        path.write_text(json.dumps(flat) + "\n" + json.dumps(nested) + "\n", encoding="utf-8")
        report = loom.import_file(path)
        held = 1 + count_nested(roots[1])
        reasons = [w["reason"] for w in report.warnings]
        assert (f"the file holds {held} message(s) in this conversation; 2 are in the store "
                f"after this import") in reasons


class TestChatbotUi:
    def export(self) -> dict[str, Any]:
        return {
            "version": 4,
            "history": [
                {"id": "c-1", "name": "Loom question", "folderId": "f-1",
                 "model": {"id": "gpt-4", "name": "GPT-4", "maxLength": 24000,
                           "tokenLimit": 8000},
                 "prompt": "You are terse.", "temperature": 0.5,
                 "messages": [{"role": "user", "content": "What is a loom?"},
                              {"role": "assistant", "content": "A frame for weaving."},
                              {"role": "user", "content": "And a heddle?"},
                              {"role": "assistant", "content": "It lifts threads."}]},
                {"id": "c-2", "name": "Second", "folderId": None,
                 "model": {"id": "gpt-3.5-turbo"}, "prompt": "", "temperature": 1,
                 "messages": [{"role": "user", "content": "hi"}]},
            ],
            "folders": [{"id": "f-1", "name": "Weaving", "type": "chat"}],
            "prompts": [{"id": "p-1", "name": "Summarise", "content": "Summarise {{text}}",
                         "model": {"id": "gpt-4"}, "folderId": None}],
        }

    def test_each_conversation_is_a_linear_tree(self, loom: Loom, tmp_path: Path) -> None:
        path = write_json(tmp_path, "chatbot_ui_history.json", self.export())
        assert detect(Input(path)) == "chatbot_ui"
        report = loom.import_file(path)
        assert report.errors == [] and report.warnings == [] and len(report.trees) == 2
        assert report.nodes == 5 == len(all_nodes(loom))
        first = next(t for t in loom.trees() if t.title == "Loom question")
        assert first.system == "You are terse."
        meta = first.lineage["imported"]["metadata"]
        assert meta == {"temperature": 0.5, "model": "gpt-4", "folder": "Weaving",
                        "prompts_left_out": 1}
        answers = [n for n in loom.tree_nodes(first.id) if n.role == "assistant"]
        assert [n.author for n in answers] == ["gpt-4", "gpt-4"]
        assert loom.branch_points(first.id) == []
        assert loom.import_file(path).nodes == 0

    def test_open_webui_history_objects_still_go_to_open_webui(self, tmp_path: Path) -> None:
        path = write_json(tmp_path, "owui.json", load_sample(
            "openwebui_export_openwebui-importer_webui-json.json"))
        assert detect(Input(path)) == "openwebui"


class TestLibreChatMessagesTree:
    def test_the_older_recursive_export_lands_like_the_newer(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        newer = load_sample("librechat_export_librechat-tree.json")
        older = {k: v for k, v in newer.items() if k != "messages"}
        older["messagesTree"] = newer["messages"]

        def count(items: list[Any]) -> int:
            return sum(1 + count(m.get("children") or []) for m in items)
        path = write_json(tmp_path, "librechat_old.json", older)
        assert detect(Input(path)) == "librechat"
        report = loom.import_file(path)
        assert report.errors == [] and report.nodes == count(newer["messages"]) == 9
        (tree,) = loom.trees()
        assert len(loom.branch_points(tree.id)) == 2  # the sample's two forks


class TestChatGptFragment:
    def test_a_root_whose_parent_is_missing_becomes_the_root_with_a_warning(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        (conv,) = load_sample("chatgpt_fixture_mitkury_example-conversation.json")
        del conv["mapping"]["msg-1"]  # cut the conversation below its first message
        path = write_json(tmp_path, "fragment.json", [conv])
        report = loom.import_file(path)
        assert report.errors == [] and report.nodes == 5
        assert [w["reason"] for w in report.warnings] == [
            "a fragment: the parent 'msg-1' of message 'msg-2' is not in the mapping; "
            "'msg-2' is imported as the root"]
        (tree,) = loom.trees()
        assert loom.node(tree.root).origin["message"] == "msg-2"
        assert len(loom.branch_points(tree.id)) == 1
        assert loom.verify().ok

    def test_a_missing_parent_inside_a_whole_conversation_is_still_an_error(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        (conv,) = load_sample("chatgpt_fixture_mitkury_example-conversation.json")
        del conv["mapping"]["msg-3"]
        report = loom.import_file(write_json(tmp_path, "holed.json", [conv]))
        assert report.trees == [] and "parent ids not in the conversation" in \
            report.errors[0]["reason"]
        assert loom.trees() == []


def test_a_chatbot_ui_export_of_wrong_types_is_refused_per_conversation(
    loom: Loom, tmp_path: Path
) -> None:
    export = {"version": 4, "folders": 5, "prompts": "x", "history": [
        {"id": "ok", "name": "fine", "folderId": ["not", "a", "key"],
         "messages": [{"role": "user", "content": "hi"}]},
        {"id": "bad", "messages": [{"role": "robot", "content": "?"}]},
        "not a conversation",
    ]}
    report = loom.import_file(write_json(tmp_path, "chatbot_ui_history.json", export))
    assert len(report.trees) == 1 and len(report.errors) == 2
    assert "unknown role 'robot'" in report.errors[0]["reason"]
    assert "expected an object" in report.errors[1]["reason"]
