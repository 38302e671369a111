"""Imported conversations in a real store: shape, ids, idempotency, all-or-nothing.

Every test writes through `loomdb.interop.writer.import_file` into the `loom` fixture
(each backend). Expectations are counted from the files themselves: the real samples
in tests/fixtures/interop and exports the tests build from each tool's documented
structure (tests/interop/interop_fixtures.py).
"""

from __future__ import annotations

import json
import sys
import tracemalloc
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent / "interop"))

from interop_fixtures import (  # noqa: E402
    NO_PARENT,
    cg_branched,
    cg_conversation,
    cg_message,
    lc_export,
    lc_message,
    loom_node,
    oasst_node,
    oasst_tree,
    owui_chat,
    owui_message,
    sample,
    write_json,
    write_jsonl,
)

import loomdb  # noqa: E402
from helpers import row_counts  # noqa: E402
from loomdb import Loom  # noqa: E402
from loomdb.errors import InvalidInput  # noqa: E402
from loomdb.interop import parse_file  # noqa: E402
from loomdb.interop.importer import import_file  # noqa: E402
from loomdb.interop.model import ImportedConversation  # noqa: E402
from loomdb.interop.report import ImportReport  # noqa: E402
from loomdb.interop.writer import derive_id  # noqa: E402

T0 = 1_700_000_000.0


# ---------------------------------------------------------------- reading the store back


def session_of(loom: Loom, tree_id: str) -> str:
    sessions = loom.refs("session", tree_id)
    assert len(sessions) == 1, sessions
    return sessions[0].name


def source_ids(loom: Loom, ids: list[str]) -> list[str]:
    return [n.origin["message"] for n in loom.nodes(ids)]  # type: ignore[index]


def active_sources(loom: Loom, tree_id: str) -> list[str]:
    return source_ids(loom, loom.path(session_of(loom, tree_id)))


def shape(loom: Loom, tree_id: str) -> tuple[int, int]:
    """(nodes, branch points) of a stored tree."""
    return loom.tree(tree_id).nodes, len(loom.branch_points(tree_id))


def imported(loom: Loom, path: Path, fmt: str = "auto", **kw: Any) -> ImportReport:
    report = import_file(loom, path, fmt, **kw)
    return report


# ---------------------------------------------------------------- counting the files


def chatgpt_counts(conv: dict[str, Any]) -> tuple[int, int, list[str]]:
    """(messages, branch points, active path) straight from a ChatGPT mapping."""
    mapping = conv["mapping"]

    def is_message(key: str) -> bool:
        msg = mapping[key].get("message")
        return bool(msg) and (msg.get("content") is not None or bool(msg.get("author", {}).get("role")))

    messages = [k for k in mapping if is_message(k)]
    branch = sum(1 for k in messages if len(mapping[k].get("children") or []) >= 2)
    path: list[str] = []
    node = conv.get("current_node")
    while node is not None:
        if is_message(node):
            path.append(node)
        node = mapping[node].get("parent")
    return len(messages), branch, path[::-1]


def nested_counts(root: dict[str, Any], key: str) -> tuple[int, int]:
    """(nodes, nodes with 2+ children) of a nested tree whose children sit under `key`."""
    nodes = branch = 0
    stack = [root]
    while stack:
        node = stack.pop()
        nodes += 1
        kids = node.get(key) or []
        branch += len(kids) >= 2
        stack.extend(kids)
    return nodes, branch


# ---------------------------------------------------------------- the real samples


class TestRealSamples:
    @pytest.mark.parametrize("name", [
        "chatgpt_export_librechat_chatgpt-tree.json",
        "chatgpt_export_realazthat_chatgpt2graph_examples.json",
        "chatgpt_fixture_mitkury_example-conversation.json",
    ])
    def test_chatgpt_exports_keep_every_branch_and_the_active_one(self, loom: Loom, name: str) -> None:
        raw = json.loads(sample(name).read_text())
        report = imported(loom, sample(name))
        assert report.errors == [] and len(report.trees) == len(raw)
        for conv, tree_id in zip(raw, report.trees, strict=True):
            messages, branch, path = chatgpt_counts(conv)
            assert shape(loom, tree_id) == (messages, branch)
            assert active_sources(loom, tree_id) == path
        assert report.nodes == sum(chatgpt_counts(c)[0] for c in raw)
        assert loom.verify().ok

    def test_the_chatgpt_tree_sample_matches_its_description(self, loom: Loom) -> None:
        # SOURCES.md: 13 mapping nodes (one is the null root), 2 nodes with 2 children
        report = imported(loom, sample("chatgpt_export_librechat_chatgpt-tree.json"))
        (tree_id,) = report.trees
        assert shape(loom, tree_id) == (12, 2)
        leaf = loom.node(session_of(loom, tree_id))
        raw = json.loads(sample("chatgpt_export_librechat_chatgpt-tree.json").read_text())[0]
        assert leaf.origin == {"format": "chatgpt", "conversation": raw["conversation_id"],
                               "message": raw["current_node"]}

    def test_hidden_system_nodes_are_nodes_tagged_hidden_and_stay_in_context(self, loom: Loom) -> None:
        report = imported(loom, sample("chatgpt_export_realazthat_chatgpt2graph_examples.json"))
        (tree_id,) = report.trees
        nodes = loom.tree_nodes(tree_id)
        hidden = [n for n in nodes if "hidden" in loom.meta(n.id).tags]
        assert len(hidden) == 2 and all(not loom.meta(n.id).excluded for n in hidden)
        roles = Counter(n.role for n in nodes)
        assert set(roles) == {"system", "user", "assistant", "tool"}
        in_context = len(loom.context(session_of(loom, tree_id))["messages"])
        assert in_context == len(loom.path(session_of(loom, tree_id)))

    def test_claude_conversations_are_linear_trees(self, loom: Loom) -> None:
        raw = json.loads(sample("claude_export_first10.json").read_text())
        report = imported(loom, sample("claude_export_first10.json"))
        assert report.errors == [] and len(report.trees) == len(raw) == 10
        for conv, tree_id in zip(raw, report.trees, strict=True):
            n = len(conv["chat_messages"])
            assert shape(loom, tree_id) == (n, 0)
            assert active_sources(loom, tree_id) == [m["uuid"] for m in conv["chat_messages"]]

    def test_librechat_nested_branches(self, loom: Loom) -> None:
        raw = json.loads(sample("librechat_export_librechat-tree.json").read_text())
        report = imported(loom, sample("librechat_export_librechat-tree.json"))
        (tree_id,) = report.trees
        nodes = branch = 0
        for top in raw["messages"]:
            n, b = nested_counts(top, "children")
            nodes, branch = nodes + n, branch + b
        assert (nodes, branch) == (9, 2)
        assert shape(loom, tree_id) == (nodes, branch)

    def test_oasst_trees_keep_every_alternative_as_siblings(self, loom: Loom) -> None:
        path = sample("oasst_en_first10_trees.jsonl")
        raw = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        report = imported(loom, path)
        assert report.errors == [] and len(report.trees) == len(raw) == 10
        for tree, tree_id in zip(raw, report.trees, strict=True):
            assert shape(loom, tree_id) == nested_counts(tree["prompt"], "replies")
        parsed = [c for c in parse_file(path) if isinstance(c, ImportedConversation)]
        for conv, tree_id in zip(parsed, report.trees, strict=True):
            assert active_sources(loom, tree_id)[-1] == conv.current_source_id

    def test_openwebui_active_branch_is_current_id(self, loom: Loom) -> None:
        path = sample("openwebui_export_openwebui-importer_webui-json.json")
        raw = json.loads(path.read_text())
        chat = (raw[0] if isinstance(raw, list) else raw)
        chat = chat.get("chat", chat)
        history = chat["history"]
        report = imported(loom, path)
        (tree_id,) = report.trees
        assert shape(loom, tree_id)[0] == len(history["messages"])
        assert active_sources(loom, tree_id)[-1] == history["currentId"]

    def test_sharegpt_records_are_linear_and_missing_images_say_so(self, loom: Loom) -> None:
        path = sample("sharegpt_llamafactory_mllm_demo.json")
        raw = json.loads(path.read_text())
        report = imported(loom, path)
        assert len(report.trees) == len(raw) and report.blobs == 0
        for record, tree_id in zip(raw, report.trees, strict=True):
            turns = record.get("messages") or record.get("conversations")
            assert shape(loom, tree_id) == (len(turns), 0)
        texts = [b["text"] for t in report.trees for n in loom.tree_nodes(t) for b in n.content
                 if b["type"] == "text"]
        assert any(t.startswith("[image not in the export:") for t in texts)

    def test_every_sample_imports_twice_adding_nothing_the_second_time(self, loom: Loom) -> None:
        files = sorted(p for p in sample("SOURCES.md").parent.iterdir() if p.suffix != ".md")
        first = [imported(loom, p) for p in files]
        counts = row_counts(loom)
        second = [imported(loom, p) for p in files]
        assert all(r.errors == [] for r in first + second)
        for a, b in zip(first, second, strict=True):
            assert b.to_json() == {"trees": [], "nodes": 0, "blobs": 0, "skipped": a.nodes,
                                   "errors": [], "warnings": []}
        assert row_counts(loom) == counts
        assert loom.verify().ok


# ---------------------------------------------------------------- ids and fields


class TestIdsAndFields:
    def test_ids_are_ulids_from_source_time_and_source_ids(self, loom: Loom, tmp_path: Path) -> None:
        report = imported(loom, write_json(tmp_path, "c.json", [cg_branched()]))
        (tree_id,) = report.trees
        from datetime import UTC, datetime

        assert tree_id == derive_id(datetime.fromtimestamp(T0, UTC), "chatgpt", "conv-1")
        by_source = {n.origin["message"]: n for n in loom.tree_nodes(tree_id)}  # type: ignore[index]
        assert by_source["u1"].id == derive_id(datetime.fromtimestamp(T0 + 1, UTC),
                                               "chatgpt", "conv-1", "u1")
        from ulid import ULID

        assert ULID.from_str(by_source["a1"].id).milliseconds == int((T0 + 2) * 1000)

    def test_fields_roles_models_times_and_lineage(self, loom: Loom, tmp_path: Path) -> None:
        report = imported(loom, write_json(tmp_path, "c.json", [cg_branched()]))
        (tree_id,) = report.trees
        tree = loom.tree(tree_id)
        assert tree.title == "A chat" and tree.created_at == "2023-11-14T22:13:20.000000Z"
        assert tree.lineage["imported"]["format"] == "chatgpt"  # type: ignore[index]
        assert tree.lineage["imported"]["conversation"] == "conv-1"  # type: ignore[index]
        by_source = {n.origin["message"]: n for n in loom.tree_nodes(tree_id)}  # type: ignore[index]
        a1, u1, sys_node = by_source["a1"], by_source["u1"], by_source["sys"]
        assert (a1.role, a1.author, a1.source) == ("assistant", "gpt-4o", "import")
        assert a1.provenance["model"] == "gpt-4o" and a1.provenance["imported"] is True  # type: ignore[index]
        assert (u1.role, u1.author) == ("user", "human")
        assert u1.created_at == "2023-11-14T22:13:21.000000Z"
        # the hidden system node has no time: it takes the conversation's
        assert sys_node.created_at == tree.created_at and "hidden" in loom.meta(sys_node.id).tags
        assert tree.root == sys_node.id
        assert u1.content == [{"type": "text", "text": "hello"}]

    def test_the_active_branch_is_a_session_on_current_node(self, loom: Loom, tmp_path: Path) -> None:
        report = imported(loom, write_json(tmp_path, "c.json", [cg_branched()]))
        (tree_id,) = report.trees
        name = session_of(loom, tree_id)
        assert name == "import/chatgpt/conv-1"
        assert active_sources(loom, tree_id) == ["sys", "u1", "a1", "u2", "a2"]
        assert loom.ref(name).kind == "session"
        assert shape(loom, tree_id) == (6, 1)

    def test_conversations_without_times_get_stable_ids(self, loom: Loom, tmp_path: Path) -> None:
        rows = [{"messages": [{"role": "user", "content": "hi"},
                              {"role": "assistant", "content": "hello"}]}]
        path = write_jsonl(tmp_path, "train.jsonl", rows)
        first = imported(loom, path, "openai_jsonl")
        (tree_id,) = first.trees
        assert tree_id.startswith("0000000000")
        second = imported(loom, path, "openai_jsonl")
        assert (second.trees, second.nodes, second.skipped) == ([], 0, 2)
        nodes = loom.tree_nodes(tree_id)
        assert [n.role for n in nodes] == ["user", "assistant"]  # file order kept in time order

    def test_two_sources_with_the_same_ids_do_not_collide(self, loom: Loom, tmp_path: Path) -> None:
        a = imported(loom, write_json(tmp_path, "a.json", [cg_branched("same")]))
        raw = cg_branched("same")
        raw["title"] = "another"
        b = imported(loom, write_json(tmp_path, "b.json", [raw]))
        assert b.trees == [] and b.skipped == 6  # same format + same id = the same conversation
        lc = imported(loom, write_json(tmp_path, "lc.json", lc_export(
            [lc_message("same", NO_PARENT, True, "hi")], conv_id="same")))
        assert len(lc.trees) == 1 and lc.trees != a.trees


# ---------------------------------------------------------------- roots, versions, growth


class TestRootsAndGrowth:
    def test_several_top_level_messages_become_versions_of_the_root(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        # ChatGPT after editing the first message: the null root has two user children
        raw = cg_conversation([
            ("root", None, None),
            ("u1", "root", cg_message("u1", "user", ["first try"], create_time=T0 + 1)),
            ("a1", "u1", cg_message("a1", "assistant", ["answer 1"], create_time=T0 + 2)),
            ("u1b", "root", cg_message("u1b", "user", ["second try"], create_time=T0 + 3)),
            ("a1b", "u1b", cg_message("a1b", "assistant", ["answer 2"], create_time=T0 + 4)),
        ], current_node="a1b")
        report = imported(loom, write_json(tmp_path, "c.json", [raw]))
        (tree_id,) = report.trees
        assert loom.tree(tree_id).nodes == 4
        by_source = {n.origin["message"]: n for n in loom.tree_nodes(tree_id)}  # type: ignore[index]
        root = loom.tree(tree_id).root
        assert root == by_source["u1"].id
        assert loom.versions(root) == [by_source["u1"].id, by_source["u1b"].id]
        assert by_source["u1b"].edited_from == root and by_source["a1b"].parent == by_source["u1b"].id
        assert active_sources(loom, tree_id) == ["u1b", "a1b"]
        texts = [m["content"][0]["text"] for m in loom.context(session_of(loom, tree_id))["messages"]]
        assert texts == ["second try", "answer 2"]
        assert source_ids(loom, loom.path(by_source["a1"].id)) == ["u1", "a1"]
        assert loom.verify().ok

    def test_a_grown_conversation_adds_only_its_new_messages_and_moves_the_session(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        imported(loom, write_json(tmp_path, "c.json", [cg_branched()]))
        grown = cg_branched()
        for mid, parent, role in (("u3", "a2", "user"), ("a3", "u3", "assistant")):
            grown["mapping"][mid] = {"id": mid, "parent": parent, "children": [],
                                     "message": cg_message(mid, role, [mid], create_time=T0 + 20)}
            grown["mapping"][parent]["children"].append(mid)
        grown["current_node"] = "a3"
        report = imported(loom, write_json(tmp_path, "c2.json", [grown]))
        assert (report.trees, report.nodes, report.skipped) == ([], 2, 6)
        tree_id = loom.trees()[0].id
        assert active_sources(loom, tree_id) == ["sys", "u1", "a1", "u2", "a2", "u3", "a3"]
        log = loom.ref_log(session_of(loom, tree_id))
        assert [m.reason for m in log][-1].startswith("import:")
        again = imported(loom, write_json(tmp_path, "c3.json", [grown]))
        assert (again.nodes, again.skipped) == (0, 8)
        assert len(loom.ref_log(session_of(loom, tree_id))) == len(log)

    def test_a_user_moved_session_is_not_moved_back_by_a_plain_reimport(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        path = write_json(tmp_path, "c.json", [cg_branched()])
        (tree_id,) = imported(loom, path).trees
        name = session_of(loom, tree_id)
        loom.append(name, "my own follow-up")
        imported(loom, path)
        assert loom.node(name).content == [{"type": "text", "text": "my own follow-up"}]


    def test_a_continued_session_stays_put_when_the_source_grows(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        (tree_id,) = imported(loom, write_json(tmp_path, "c.json", [cg_branched()])).trees
        name = session_of(loom, tree_id)
        mine = loom.append(name, "my own follow-up")
        grown = cg_branched()
        grown["mapping"]["u3"] = {"id": "u3", "parent": "a2", "children": [],
                                  "message": cg_message("u3", "user", ["u3"], create_time=T0 + 20)}
        grown["mapping"]["a2"]["children"].append("u3")
        grown["current_node"] = "u3"
        report = imported(loom, write_json(tmp_path, "c2.json", [grown]))
        assert report.nodes == 1
        assert loom.ref(name).node == mine.id

    def test_progress_follows_the_bytes_read(self, loom: Loom, tmp_path: Path) -> None:
        path = write_json(tmp_path, "c.json", [cg_branched(f"c{i}") for i in range(5)])
        seen: list[tuple[int, int, int]] = []
        imported(loom, path, progress=lambda r, done, total: seen.append(
            (r.conversations, done, total)))
        assert [c for c, _, _ in seen] == [1, 2, 3, 4, 5]
        assert all(t == path.stat().st_size for _, _, t in seen)
        assert seen[-1][1] == path.stat().st_size
        assert [d for _, d, _ in seen] == sorted(d for _, d, _ in seen)


# ---------------------------------------------------------------- attachments, tags, bookmarks


def image_part(file_id: str) -> dict[str, Any]:
    return {"content_type": "image_asset_pointer", "asset_pointer": f"file-service://{file_id}",
            "size_bytes": 9, "width": 4, "height": 4}


def zip_export(tmp_path: Path, convs: list[dict[str, Any]], name: str = "export.zip") -> Path:
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("conversations.json", json.dumps(convs))
        zf.writestr("file-Cat123-cat.png", b"\x89PNG cat")
        zf.writestr("chat.html", "<html></html>")
    return path


def picture_conv(conv_id: str = "pics", big: str | None = None) -> dict[str, Any]:
    content = {"content_type": "multimodal_text",
               "parts": [image_part("file-Cat123"), image_part("file-Gone99"), "what are these?"]}
    nodes: list[tuple[str, str | None, dict[str, Any] | None]] = [
        ("root", None, None),
        ("u1", "root", cg_message("u1", "user", content=content, create_time=T0 + 1)),
        ("a1", "u1", cg_message("a1", "assistant", ["a cat"], create_time=T0 + 2)),
    ]
    if big is not None:
        nodes.append(("u2", "a1", cg_message("u2", "user", [big], create_time=T0 + 3)))
    return cg_conversation(nodes, conv_id=conv_id, current_node=nodes[-1][0])


class TestAttachmentsAndOverlay:
    def test_zip_attachments_go_to_the_blob_store_and_missing_ones_say_so(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        report = imported(loom, zip_export(tmp_path, [picture_conv()]))
        assert report.errors == [] and report.blobs == 1
        (tree_id,) = report.trees
        user = next(n for n in loom.tree_nodes(tree_id) if n.role == "user")
        image, missing, text = user.content
        assert image["type"] == "image" and image["mime_type"] == "image/png"
        assert loom.blob(image["ref"]) == b"\x89PNG cat"
        assert missing["type"] == "text" and missing["text"].startswith(
            "[image not in the export: file-Gone99")
        assert text == {"type": "text", "text": "what are these?"}
        again = imported(loom, zip_export(tmp_path, [picture_conv()], "again.zip"))
        assert (again.blobs, again.nodes, again.skipped) == (0, 0, 2)

    def test_loom_saves_become_buffer_trees_with_tags_and_bookmarks(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        save = {"root": loom_node("n0", "Once upon", [
            loom_node("a1", " a time", [loom_node("a2", " there was")],
                      meta={"source": "AI"}, tags=["bookmark", "demo"]),
            loom_node("b1", " midnight", bookmark=True, name="The midnight branch"),
        ]), "selected_node_id": "a2"}
        report = imported(loom, write_json(tmp_path, "story.json", save))
        (tree_id,) = report.trees
        tree = loom.tree(tree_id)
        assert tree.mode == "buffer" and tree.nodes == 4
        by_source = {n.origin["message"]: n for n in loom.tree_nodes(tree_id)}  # type: ignore[index]
        marks = {r.name: r.node for r in loom.refs("bookmark", tree_id)}
        base = session_of(loom, tree_id)
        assert marks == {f"{base}/loom-a1": by_source["a1"].id,
                         f"{base}/The-midnight-branch": by_source["b1"].id}
        assert loom.meta(by_source["a1"].id).tags == ("demo",)
        assert active_sources(loom, tree_id) == ["n0", "a1", "a2"]
        assert imported(loom, write_json(tmp_path, "again.json", save)).nodes == 0
        assert len(loom.refs("bookmark", tree_id)) == 2

    def test_openwebui_and_oasst_fixtures(self, loom: Loom, tmp_path: Path) -> None:
        chat = owui_chat([
            owui_message("m1", None, "user", "hi"),
            owui_message("m2", "m1", "assistant", "hello", model="llama3"),
            owui_message("m3", "m1", "assistant", "hey", model="llama3"),
        ], current="m2")
        oasst = oasst_tree(oasst_node("p", "prompter", "q?", [
            oasst_node("r1", "assistant", "one", rank=1),
            oasst_node("r2", "assistant", "two", rank=0, replies=[
                oasst_node("f", "prompter", "thanks")]),
        ]))
        a = imported(loom, write_json(tmp_path, "owui.json", [chat]))
        b = imported(loom, write_jsonl(tmp_path, "oasst.jsonl", [oasst]))
        assert shape(loom, a.trees[0]) == (3, 1) and active_sources(loom, a.trees[0]) == ["m1", "m2"]
        assert shape(loom, b.trees[0]) == (4, 1)
        assert active_sources(loom, b.trees[0]) == ["p", "r2", "f"]


# ---------------------------------------------------------------- errors, all-or-nothing


class TestErrors:
    def test_a_conversation_failing_mid_write_leaves_nothing_and_the_others_land(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        loom.max_content_bytes = 2000  # the third message of "bad" is over it
        before = row_counts(loom)
        path = zip_export(tmp_path, [cg_branched("good-1"), picture_conv("bad", big="x" * 5000),
                                     cg_branched("good-2")])
        report = imported(loom, path)
        assert len(report.trees) == 2 and report.nodes == 12 and report.blobs == 0
        (error,) = report.errors
        assert "[1]" in error["where"] and "bad" in error["where"]
        assert "over the limit" in error["reason"]
        # nothing of "bad" is left: 2 trees of 6 nodes, no blob row, refs for the good ones
        after = row_counts(loom)
        assert after["trees"] - before["trees"] == 2 and after["nodes"] - before["nodes"] == 12
        assert after["blobs"] == before["blobs"] and after["refs"] - before["refs"] == 2
        assert not any("bad" in r.name for r in loom.refs())
        loom.max_content_bytes = 4 * 1024 * 1024
        fixed = imported(loom, path)
        assert len(fixed.trees) == 1 and fixed.blobs == 1 and fixed.skipped == 12

    @pytest.mark.parametrize("bad, reason", [
        ({"mapping": {"a": {"id": "a", "parent": "b", "children": [],
                            "message": cg_message("a", "user", ["x"])},
                      "b": {"id": "b", "parent": "a", "children": [],
                            "message": cg_message("b", "user", ["y"])}},
          "conversation_id": "cyc"}, "cycle"),
        # a missing parent beside a real root is a hole, not a fragment (those land)
        ({"mapping": {"r": {"id": "r", "parent": None, "children": [],
                            "message": cg_message("r", "user", ["r"])},
                      "a": {"id": "a", "parent": "ghost", "children": [],
                            "message": cg_message("a", "user", ["x"])}},
          "conversation_id": "dangling"}, "ghost"),
        ({"mapping": {"a": {"id": "a", "parent": None, "children": "nope",
                            "message": cg_message("a", "user", ["x"])}},
          "conversation_id": "types"}, "expected an array"),
        ({"title": "no mapping", "conversation_id": "empty"}, "no mapping"),
    ])
    def test_bad_conversations_are_reported_by_place_and_the_good_ones_land(
        self, loom: Loom, tmp_path: Path, bad: dict[str, Any], reason: str
    ) -> None:
        path = write_json(tmp_path, "c.json", [cg_branched("good-1"), bad, cg_branched("good-2")])
        report = imported(loom, path, "chatgpt")
        assert len(report.trees) == 2 and report.nodes == 12
        (error,) = report.errors
        assert set(error) == {"where", "reason"}
        assert "c.json[1]" in error["where"] and reason in error["reason"]

    def test_duplicate_message_ids_are_reported(self, loom: Loom, tmp_path: Path) -> None:
        text = json.dumps([cg_branched("dup")])
        text = text.replace('"a1b": {', '"a1": {', 1)  # two mapping keys "a1"
        path = tmp_path / "dup.json"
        path.write_text(text)
        report = imported(loom, path)
        assert report.trees == [] and "duplicate" in report.errors[0]["reason"]
        assert row_counts(loom)["nodes"] == 0

    def test_a_conversation_id_twice_in_one_file_is_an_error_not_a_merge(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        other = cg_conversation([("root", None, None),
                                 ("z", "root", cg_message("z", "user", ["other"]))], conv_id="conv-1")
        report = imported(loom, write_json(tmp_path, "c.json", [cg_branched(), other]))
        assert len(report.trees) == 1 and report.nodes == 6
        assert "appears twice" in report.errors[0]["reason"]

    def test_stop_on_error_stops_at_the_first_bad_conversation(self, loom: Loom, tmp_path: Path) -> None:
        bad = {"title": "no mapping", "conversation_id": "empty"}
        path = write_json(tmp_path, "c.json", [cg_branched("good-1"), bad, cg_branched("good-2")])
        report = imported(loom, path, stop_on_error=True)
        assert len(report.trees) == 1 and len(report.errors) == 1
        assert [t.lineage["imported"]["conversation"] for t in loom.trees()] == ["good-1"]  # type: ignore[index]

    def test_a_truncated_file_keeps_the_conversations_before_the_break(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        text = json.dumps([cg_branched("good-1"), cg_branched("good-2"), cg_branched("cut")])
        path = tmp_path / "cut.json"
        path.write_text(text[: len(text) - 200])
        report = imported(loom, path)
        assert len(report.trees) == 2
        (error,) = report.errors
        assert "byte" in error["where"] and "conversation index 2" in error["reason"]

    def test_a_file_broken_from_the_start_raises_and_writes_nothing(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        path = tmp_path / "broken.json"
        path.write_text('[{"mapping": {"a": ')
        with pytest.raises(InvalidInput):
            imported(loom, path, "chatgpt")
        for name, content in (("empty.json", ""), ("text.json", "hello"), ("num.json", "[1, 2]")):
            (tmp_path / name).write_text(content)
            with pytest.raises(InvalidInput):
                imported(loom, tmp_path / name)
        with pytest.raises(InvalidInput, match="unknown format"):
            imported(loom, write_json(tmp_path, "c.json", [cg_branched()]), "whatsapp")
        assert row_counts(loom)["trees"] == 0


# ---------------------------------------------------------------- memory


def test_a_large_export_imports_in_memory_bounded_by_one_conversation(tmp_path: Path) -> None:
    """Measured once, on the embedded store: Python's peak stays far below the file."""
    path = tmp_path / "big.json"
    filler = "lorem ipsum dolor sit amet " * 80  # ~2 KB per message
    with path.open("w") as fh:
        fh.write("[")
        for i in range(300):
            fh.write("," if i else "")
            nodes: list[tuple[str, str | None, dict[str, Any] | None]] = [("root", None, None)]
            for j in range(10):
                nodes.append((f"m{j}", nodes[-1][0], cg_message(
                    f"m{j}", "user" if j % 2 == 0 else "assistant", [f"{i}/{j} {filler}"],
                    create_time=T0 + i * 100 + j)))
            fh.write(json.dumps(cg_conversation(nodes, conv_id=f"c{i}", current_node="m9")))
        fh.write("]")
    size = path.stat().st_size
    assert size > 6_000_000
    with loomdb.open(str(tmp_path / "store")) as loom:
        loom.context  # noqa: B018 - warm imports before measuring
        tracemalloc.start()
        try:
            report = imported(loom, path)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert report.nodes == 3000 and not report.errors
    assert peak < size / 3, f"peak {peak} bytes for a {size} byte file"
