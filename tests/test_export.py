"""Export: the lossless `json`/`jsonl` round trip, tamper evidence, and the renderings
(`markdown`, `openai-jsonl`, `chatgpt`) checked by reading them back."""

from __future__ import annotations

import io
import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent / "interop"))

from interop_fixtures import sample  # noqa: E402

import loomdb  # noqa: E402
from helpers import row_counts  # noqa: E402
from loomdb import Loom  # noqa: E402
from loomdb.errors import InvalidInput  # noqa: E402
from loomdb.interop.export import export  # noqa: E402
from loomdb.interop.importer import import_file  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n tiny picture"


def rich_tree(loom: Loom) -> dict[str, str]:
    """A tree using every part of the model: branches, a version, a view with a
    selection, a hyperedge source, tool blocks, a blob, bookmark/tags/excluded/pruned,
    an annotation, plus a second tree linked to the first."""
    tree, root = loom.new_tree("What is a loom?", session="main", system="Be brief.",
                               options={"temperature": 0.7}, title="Looms")
    a1 = loom.append("main", "A frame for weaving.", role="assistant",
                     provenance={"model": "m-1", "usage": {"output_tokens": 5}},
                     options={"max_tokens": 50})
    u2 = loom.append("main", "And loomdb?")
    a2 = loom.append("main", [{"type": "tool_use", "id": "call_1", "name": "lookup",
                               "input": {"q": "loomdb"}}], role="assistant")
    loom.append("main", [{"type": "tool_result", "tool_use_id": "call_1",
                          "content": [{"type": "text", "text": "git for chats"}]}], role="tool")
    a3 = loom.append("main", "Git for conversations.", role="assistant", also=[(a1.id, "context")])
    img = loom.put_blob(PNG, "image/png")
    pic = loom.append("main", [{"type": "image", "ref": img, "mime_type": "image/png",
                                "alt_text": "a loom"}, {"type": "text", "text": "look"}])
    alt = loom.append(root.id, "It holds the warp taut.", role="assistant")
    loom.fork(u2.id, "curious")
    cur = loom.append("curious", "A store for branching chats.", role="assistant", cache=True)
    version = loom.edit(root.id, "What is a loom? Explain it to a child.")
    loom.view("spliced", "main")
    loom.select("spliced", version.id)
    via_view = loom.append("spliced", "Thanks!")
    loom.bookmark(a1.id, "first-answer")
    loom.tag(a2.id, "tools", "demo")
    loom.exclude(alt.id)
    loom.prune(cur.id)
    loom.link(root.id, a3.id, type="annotation")
    _, other = loom.new_tree("Another tree", session="other-main")
    loom.link(other.id, a1.id, type="link")
    return {"tree": tree.id, "root": root.id, "a1": a1.id, "u2": u2.id, "a2": a2.id,
            "a3": a3.id, "pic": pic.id, "alt": alt.id, "cur": cur.id, "version": version.id,
            "via_view": via_view.id, "other": other.tree}


def dump(loom: Loom, **kw: Any) -> str:
    out = io.StringIO()
    export(loom, out, **kw)
    return out.getvalue()


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def comparable(text: str) -> Any:
    doc = json.loads(text)
    doc.pop("exported_at", None)
    return doc


@pytest.fixture
def other_store(tmp_path: Path) -> Iterator[Loom]:
    with loomdb.open(str(tmp_path / "other-store")) as lm:
        yield lm


# ---------------------------------------------------------------- json / jsonl


class TestLosslessRoundTrip:
    def test_json_export_imports_back_identical(
        self, loom: Loom, other_store: Loom, tmp_path: Path
    ) -> None:
        ids = rich_tree(loom)
        text = dump(loom, format="json")
        report = import_file(other_store, write(tmp_path, "all.json", text))
        assert report.errors == []
        assert sorted(report.trees) == sorted([ids["tree"], ids["other"]])
        assert report.nodes == sum(t.nodes for t in loom.trees()) and report.blobs == 1
        # the same document again: ids, chain hashes, refs and their logs, overlay, edges, blobs
        assert comparable(dump(other_store, format="json")) == comparable(text)
        assert other_store.verify().ok
        for tid in (ids["tree"], ids["other"]):
            mine = {n.id: n.to_json() for n in loom.tree_nodes(tid)}
            theirs = {n.id: n.to_json() for n in other_store.tree_nodes(tid)}
            assert theirs == mine
            assert other_store.tree(tid).to_json() == loom.tree(tid).to_json()
        for ref in loom.refs():
            assert other_store.ref(ref.name) == ref
            assert [m.to_json() | {"seq": 0} for m in other_store.ref_log(ref.name)] == [
                m.to_json() | {"seq": 0} for m in loom.ref_log(ref.name)]
        assert other_store.blob(loom.node(ids["pic"]).content[0]["ref"]) == PNG
        assert other_store.meta(ids["alt"]).excluded and other_store.meta(ids["cur"]).pruned
        assert other_store.meta(ids["a2"]).tags == ("demo", "tools")
        assert other_store.context("spliced") == loom.context("spliced")
        assert other_store.context("main") == loom.context("main")
        assert [e.to_json() for e in other_store.edges(ids["a1"])] == [
            e.to_json() for e in loom.edges(ids["a1"])]

    def test_jsonl_writes_one_tree_per_line_and_reads_back(
        self, loom: Loom, other_store: Loom, tmp_path: Path
    ) -> None:
        ids = rich_tree(loom)
        text = dump(loom, format="jsonl")
        lines = text.splitlines()
        assert len(lines) == 2 and all(json.loads(line)["loomdb_export"] == 1 for line in lines)
        report = import_file(other_store, write(tmp_path, "all.jsonl", text))
        assert report.errors == [] and len(report.trees) == 2
        one = dump(loom, target="main", format="jsonl")
        assert json.loads(one)["tree"]["id"] == ids["tree"]
        assert dump(other_store, format="jsonl") == text

    def test_importing_an_export_into_its_own_store_adds_nothing(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        rich_tree(loom)
        counts = row_counts(loom)
        total = sum(t.nodes for t in loom.trees())
        report = import_file(loom, write(tmp_path, "all.json", dump(loom, format="json")))
        assert report.to_json() == {"trees": [], "nodes": 0, "blobs": 0, "skipped": total,
                                    "errors": [], "warnings": []}
        assert row_counts(loom) == counts

    def test_an_imported_sample_round_trips_through_json(
        self, loom: Loom, other_store: Loom, tmp_path: Path
    ) -> None:
        import_file(loom, sample("chatgpt_export_librechat_chatgpt-tree.json"))
        text = dump(loom, format="json")
        import_file(other_store, write(tmp_path, "x.json", text))
        assert comparable(dump(other_store, format="json")) == comparable(text)


class TestTamperEvidence:
    def tampered(self, loom: Loom, other: Loom, tmp_path: Path, change: Any) -> dict[str, Any]:
        ids = rich_tree(loom)
        doc = json.loads(dump(loom, target=ids["tree"], format="jsonl"))
        node = next(n for n in doc["nodes"] if n["id"] == ids["a3"])
        change(node)
        before = row_counts(other)
        report = import_file(other, write(tmp_path, "t.jsonl", json.dumps(doc) + "\n"))
        assert report.trees == [] and report.nodes == 0
        assert row_counts(other) == before
        (error,) = report.errors
        assert ids["a3"] in error["reason"]
        return error

    def test_changed_text_is_refused_naming_the_node(
        self, loom: Loom, other_store: Loom, tmp_path: Path
    ) -> None:
        def change(node: dict[str, Any]) -> None:
            node["content"][0]["text"] = "Git for nothing."

        error = self.tampered(loom, other_store, tmp_path, change)
        assert "content id" in error["reason"]

    @pytest.mark.parametrize("field, value", [
        ("created_at", "2001-01-01T00:00:00.000000Z"), ("author", "mallory"), ("role", "user"),
        ("chain_hash", "sha256:" + "ab" * 32),
    ])
    def test_changed_hashed_fields_are_refused(
        self, loom: Loom, other_store: Loom, tmp_path: Path, field: str, value: str
    ) -> None:
        error = self.tampered(loom, other_store, tmp_path, lambda n: n.__setitem__(field, value))
        assert "chain hash" in error["reason"]

    def test_a_ref_name_taken_here_by_another_tree_fails_that_tree_only(
        self, loom: Loom, other_store: Loom, tmp_path: Path
    ) -> None:
        rich_tree(loom)
        other_store.new_tree("mine", session="main")
        report = import_file(other_store, write(tmp_path, "a.json", dump(loom, format="json")))
        assert len(report.trees) == 1 and len(report.errors) == 1
        assert "'main'" in report.errors[0]["reason"]
        assert "already names" in report.errors[0]["reason"]

    def test_a_broken_export_names_the_place(self, other_store: Loom, tmp_path: Path) -> None:
        path = write(tmp_path, "x.json", '{"loomdb_export": 1, "trees": [{"loomdb_export": 1, "tr')
        with pytest.raises(InvalidInput, match="tree 1|truncated|malformed"):
            import_file(other_store, path)
        bad = {"loomdb_export": 1, "tree": {"id": "T"}, "nodes": [{"id": "n1", "parent": "ghost"}]}
        report = import_file(other_store, write(tmp_path, "y.jsonl", json.dumps(bad) + "\n"))
        assert "ghost" in report.errors[0]["reason"] and report.trees == []


# ---------------------------------------------------------------- chatgpt


def children_counts(loom: Loom, tree_id: str) -> Counter[int]:
    nodes = loom.tree_nodes(tree_id)
    kids = Counter(n.parent for n in nodes if n.parent)
    return Counter(kids[n.id] for n in nodes)


class TestChatGPTExport:
    def branched(self, loom: Loom) -> str:
        tree, root = loom.new_tree("Q1", session="main", title="Branches")
        a1 = loom.append("main", "A1", role="assistant")
        loom.append("main", "Q2")
        loom.append("main", "A2", role="assistant")
        loom.append(root.id, "A1 again", role="assistant")
        loom.append(a1.id, "Q2 other")
        loom.tag(root.id, "hidden")
        return tree.id

    def test_the_chatgpt_importer_reads_back_the_same_branch_shape(
        self, loom: Loom, other_store: Loom, tmp_path: Path
    ) -> None:
        tid = self.branched(loom)
        text = dump(loom, target=tid, format="chatgpt")
        doc = json.loads(text)
        assert isinstance(doc, list) and doc[0]["current_node"] == loom.resolve("main").node
        report = import_file(other_store, write(tmp_path, "conversations.json", text))
        assert report.errors == [] and report.nodes == 6
        (new,) = report.trees
        assert len(other_store.branch_points(new)) == len(loom.branch_points(tid)) == 2
        assert children_counts(other_store, new) == children_counts(loom, tid)
        session = other_store.refs("session", new)[0].name
        assert [n.origin["message"] for n in other_store.nodes(other_store.path(session))] == \
            loom.path("main")  # type: ignore[index]
        root = other_store.tree(new).root
        assert "hidden" in other_store.meta(root).tags

    def test_a_real_export_survives_chatgpt_out_and_in(
        self, loom: Loom, other_store: Loom, tmp_path: Path
    ) -> None:
        (tid,) = import_file(loom, sample("chatgpt_export_librechat_chatgpt-tree.json")).trees
        text = dump(loom, target=tid, format="chatgpt")
        (new,) = import_file(other_store, write(tmp_path, "c.json", text)).trees
        assert other_store.tree(new).nodes == loom.tree(tid).nodes == 12
        assert len(other_store.branch_points(new)) == len(loom.branch_points(tid)) == 2
        assert children_counts(other_store, new) == children_counts(loom, tid)
        mine = loom.path(loom.refs("session", tid)[0].name)
        theirs = other_store.path(other_store.refs("session", new)[0].name)
        assert [n.origin["message"] for n in other_store.nodes(theirs)] == mine  # type: ignore[index]

    def test_versions_become_siblings_in_chatgpt(self, loom: Loom, other_store: Loom,
                                                  tmp_path: Path) -> None:
        ids = rich_tree(loom)
        text = dump(loom, target=ids["tree"], format="chatgpt")
        (new,) = import_file(other_store, write(tmp_path, "c.json", text)).trees
        assert other_store.tree(new).nodes == loom.tree(ids["tree"]).nodes


# ---------------------------------------------------------------- markdown, openai-jsonl


class TestRenderings:
    def test_markdown_renders_the_named_path(self, loom: Loom) -> None:
        ids = rich_tree(loom)
        text = dump(loom, target="main", format="markdown")
        assert text.startswith("# Looms\n")
        assert "> Be brief." in text and "A frame for weaving." in text
        assert "**tool call** `lookup`" in text and "git for chats" in text
        assert "*[image: a loom]*" in text and "#demo" in text
        assert "It holds the warp taut." not in text  # another branch
        default = dump(loom, target=ids["tree"], format="markdown")
        assert default == text  # the tree's first session is `main`
        spliced = dump(loom, target="spliced", format="markdown")
        assert "Explain it to a child." in spliced and "What is a loom?\n" not in spliced
        after = dump(loom, target=ids["via_view"], format="markdown")
        assert "Explain it to a child." in after and after.rstrip().endswith("Thanks!")

    def test_openai_jsonl_writes_one_training_line_per_path(self, loom: Loom) -> None:
        ids = rich_tree(loom)
        lines = [json.loads(x) for x in dump(loom, target=ids["tree"], format="openai-jsonl")
                 .splitlines()]
        # leaves: via_view (its path keeps the view's version), alt (excluded: no assistant
        # turn is left, so no line) and cur (pruned)
        (leaf,) = lines
        assert leaf["messages"][1]["content"] == "What is a loom? Explain it to a child."
        assert leaf["messages"][-1] == {"role": "user", "content": "Thanks!"}
        by_session = [json.loads(x) for x in dump(
            loom, target=ids["tree"], format="openai-jsonl", paths="sessions").splitlines()]
        assert len(by_session) == 2  # main and curious (spliced is a view)
        main = by_session[0]
        roles = [m["role"] for m in main["messages"]]
        assert roles == ["system", "user", "assistant", "user", "assistant", "tool",
                         "assistant", "user"]
        assert main["messages"][1]["content"] == "What is a loom?"
        call = main["messages"][4]
        assert call["tool_calls"] == [{"id": "call_1", "type": "function", "function": {
            "name": "lookup", "arguments": '{"q": "loomdb"}'}}]
        assert main["messages"][5] == {"role": "tool", "tool_call_id": "call_1",
                                       "content": "git for chats"}
        image = main["messages"][-1]["content"][0]
        assert image["type"] == "image_url" and image["image_url"]["url"].startswith(
            "data:image/png;base64,")
        assert by_session[1]["messages"][-1] == {"role": "assistant",
                                                 "content": "A store for branching chats."}
        one = [json.loads(x) for x in dump(loom, target="main", format="openai-jsonl")
               .splitlines()]
        assert one == [main]

    def test_unknown_formats_and_targets_are_clear_errors(self, loom: Loom) -> None:
        rich_tree(loom)
        with pytest.raises(InvalidInput, match="unknown export format"):
            dump(loom, target="main", format="html")
        with pytest.raises(loomdb.NotFound):
            dump(loom, target="no-such-tree", format="json")


class TestDraftsTravel:
    def test_a_buffer_draft_survives_the_json_round_trip(
        self, loom: Loom, other_store: Loom, tmp_path: Path
    ) -> None:
        from loomdb import buffer

        tree, _ = loom.new_tree("Once upon a time", mode="buffer", session="story")
        buffer.set_draft(loom, "story", " there was a loom.")
        import_file(other_store, write(tmp_path, "story.json", dump(loom, format="json")))
        assert buffer.get_draft(other_store, "story") == " there was a loom."
        assert buffer.text(other_store, "story") == buffer.text(loom, "story")
