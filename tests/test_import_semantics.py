"""Imports never lose data silently (both backends).

  * a message whose id is already stored with other content lands beside it (a tree of
    its own when the first message differs, else a version or a new branch), keeping
    its source id in its origin; only byte-identical content is skipped silently;
  * a conversation with no messages, or an exact copy of an earlier one in the same
    file, is counted in `skipped` and explained in `warnings` (not an error);
  * a newer export of a conversation adds exactly its new messages and moves the
    import session to the source's new current message.

The newer exports are built from the real samples in tests/fixtures/interop.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent / "interop"))

from interop_fixtures import (  # noqa: E402
    NO_PARENT,
    cg_branched,
    cg_conversation,
    cg_message,
    claude_conversation,
    claude_message,
    lc_export,
    lc_message,
    load_sample,
    loom_node,
    oasst_node,
    oasst_tree,
    owui_chat,
    owui_message,
    write_json,
    write_jsonl,
)

import loomdb  # noqa: E402
import loomdb.cli.interop  # noqa: E402,F401  (registers the commands until cli/__init__ does)
from helpers import row_counts  # noqa: E402
from loomdb import Loom  # noqa: E402
from loomdb.cli import main  # noqa: E402
from loomdb.interop.export import export  # noqa: E402
from loomdb.interop.importer import import_file  # noqa: E402
from loomdb.interop.report import ImportReport  # noqa: E402

T0 = 1_700_000_000.0


# ---------------------------------------------------------------- reading the store back


def texts_of(loom: Loom, tree_id: str) -> set[str]:
    return {b["text"] for n in loom.tree_nodes(tree_id) for b in n.content if b["type"] == "text"}


def all_texts(loom: Loom) -> set[str]:
    return {t for tree in loom.trees() for t in texts_of(loom, tree.id)}


def import_session(loom: Loom, tree_id: str) -> str:
    (ref,) = [r for r in loom.refs("session", tree_id) if r.origin and "imported" in r.origin]
    return ref.name


def path_sources(loom: Loom, at: str) -> list[str]:
    return [n.origin["message"] for n in loom.nodes(loom.path(at))]  # type: ignore[index]


def path_texts(loom: Loom, at: str) -> list[str]:
    return [n.content[0]["text"] for n in loom.nodes(loom.path(at))]


def by_source(loom: Loom, tree_id: str) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for node in loom.tree_nodes(tree_id):
        out.setdefault(node.origin["message"], []).append(node)  # type: ignore[index]
    return out


def run_cli(db: str, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(["--db", db, *args])
        except SystemExit as exc:
            return int(exc.code or 0), out.getvalue(), err.getvalue()
    raise AssertionError("main() always exits")


# ---------------------------------------------------------------- 9: same ids, other content


def _chatgpt(tmp: Path, name: str, v: str) -> Path:
    return write_json(tmp, name, [cg_conversation([
        ("root", None, None),
        ("m1", "root", cg_message("m1", "user", [f"{v}: question"], create_time=T0 + 1)),
        ("m2", "m1", cg_message("m2", "assistant", [f"{v}: answer"], create_time=T0 + 2)),
    ], conv_id="1", current_node="m2")])


def _claude(tmp: Path, name: str, v: str) -> Path:
    return write_json(tmp, name, [claude_conversation("1", [
        claude_message("m1", "human", f"{v}: question"),
        claude_message("m2", "assistant", f"{v}: answer"),
    ])])


def _openwebui(tmp: Path, name: str, v: str) -> Path:
    return write_json(tmp, name, [owui_chat([
        owui_message("m1", None, "user", f"{v}: question"),
        owui_message("m2", "m1", "assistant", f"{v}: answer", model="llama3"),
    ], current="m2", chat_id="1")])


def _librechat(tmp: Path, name: str, v: str) -> Path:
    return write_json(tmp, name, lc_export([
        lc_message("m1", NO_PARENT, True, f"{v}: question"),
        lc_message("m2", "m1", False, f"{v}: answer"),
    ], conv_id="1"))


def _oasst(tmp: Path, name: str, v: str) -> Path:
    return write_jsonl(tmp, name, [oasst_tree(oasst_node("m1", "prompter", f"{v}: question", [
        oasst_node("m2", "assistant", f"{v}: answer")]))])


def _sharegpt(tmp: Path, name: str, v: str) -> Path:
    return write_json(tmp, name, [{"id": "1", "conversations": [
        {"from": "human", "value": f"{v}: question"}, {"from": "gpt", "value": f"{v}: answer"}]}])


def _loom(tmp: Path, name: str, v: str) -> Path:
    return write_json(tmp, name, {"root": loom_node("m1", f"{v}: question", [
        loom_node("m2", f"{v}: answer")]), "selected_node_id": "m2"})


def _openai(tmp: Path, name: str, v: str) -> Path:
    return write_jsonl(tmp, name, [{"messages": [
        {"role": "user", "content": f"{v}: question"},
        {"role": "assistant", "content": f"{v}: answer"}]}])


HAND_MADE: dict[str, Callable[[Path, str, str], Path]] = {
    "chatgpt": _chatgpt, "claude": _claude, "openwebui": _openwebui, "librechat": _librechat,
    "oasst": _oasst, "sharegpt": _sharegpt, "loom": _loom, "openai_jsonl": _openai,
}
#: formats whose sources carry no ids: the parsers derive them from the content
CONTENT_HASH_IDS = {"openai_jsonl"}


class TestSameIdsOtherContent:
    @pytest.mark.parametrize("fmt", sorted(HAND_MADE))
    def test_a_different_conversation_under_the_same_ids_lands_as_its_own_tree(
        self, loom: Loom, tmp_path: Path, fmt: str
    ) -> None:
        build = HAND_MADE[fmt]
        a = import_file(loom, build(tmp_path, "a.json", "A"), fmt)
        b = import_file(loom, build(tmp_path, "b.json", "B"), fmt)
        assert a.errors == [] and b.errors == []
        assert len(a.trees) == 1 and len(b.trees) == 1 and a.trees != b.trees
        assert (b.nodes, b.skipped) == (2, 0)
        assert texts_of(loom, a.trees[0]) == {"A: question", "A: answer"}
        assert texts_of(loom, b.trees[0]) == {"B: question", "B: answer"}
        # the source ids are kept: both trees name the same source messages (OpenAI
        # lines have no ids: theirs are content hashes, so other texts, other ids)
        same_ids = set(by_source(loom, a.trees[0])) == set(by_source(loom, b.trees[0]))
        assert same_ids is (fmt not in CONTENT_HASH_IDS)
        assert path_texts(loom, import_session(loom, b.trees[0])) == ["B: question", "B: answer"]
        # and every later import finds each where it is: nothing added, nothing reported
        for name, v in (("b2.json", "B"), ("a2.json", "A")):
            again = import_file(loom, build(tmp_path, name, v), fmt)
            assert (again.trees, again.nodes, again.errors) == ([], 0, [])
            assert again.skipped == 2
        assert loom.verify().ok

    def test_a_clash_with_an_earlier_tree_is_said_in_a_warning(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        a = import_file(loom, _chatgpt(tmp_path, "a.json", "A"))
        b = import_file(loom, _chatgpt(tmp_path, "b.json", "B"))
        (warning,) = b.warnings
        assert "b.json[0]" in warning["where"] and a.trees[0] in warning["reason"]
        assert "tree of its own" in warning["reason"]
        assert import_file(loom, _chatgpt(tmp_path, "b2.json", "B")).warnings == []

    def test_a_later_message_edited_under_its_id_becomes_a_version_with_its_replies(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        first = import_file(loom, write_json(tmp_path, "a.json", [cg_branched("same")]))
        (tree_id,) = first.trees
        edited = cg_branched("same")
        edited["mapping"]["u2"]["message"]["content"]["parts"] = ["something else"]
        report = import_file(loom, write_json(tmp_path, "b.json", [edited]))
        # u2 differs; a2 is the same text but hangs on the new u2: both are new nodes
        assert (report.trees, report.nodes, report.skipped, report.errors) == ([], 2, 4, [])
        nodes = by_source(loom, tree_id)
        old_u2, new_u2 = sorted(nodes["u2"], key=lambda n: n.edited_from is not None)
        assert new_u2.edited_from == old_u2.id and new_u2.slot == old_u2.slot
        assert {n.parent for n in nodes["a2"]} == {old_u2.id, new_u2.id}
        assert (old_u2.content[0]["text"], new_u2.content[0]["text"]) == ("more", "something else")
        assert new_u2.origin == old_u2.origin  # the source id is kept
        # the session follows the source: it was where the first import left it
        session = import_session(loom, tree_id)
        assert path_texts(loom, session) == ["", "hello", "hi!", "something else", "sure"]
        assert "u2" in report.warnings[0]["reason"]
        for path in (tmp_path / "b.json", tmp_path / "a.json"):
            again = import_file(loom, path)
            assert (again.nodes, again.skipped, again.errors) == (0, 6, [])
        assert loom.verify().ok

    def test_two_native_exports_sharing_ids_with_other_content_are_an_error(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        exports = []
        for v, text in (("a", "more"), ("b", "something else")):
            conv = cg_branched("same")
            conv["mapping"]["u2"]["message"]["content"]["parts"] = [text]
            with loomdb.open(str(tmp_path / f"store-{v}")) as other:
                import_file(other, write_json(tmp_path, f"{v}.json", [conv]))
                out = io.StringIO()
                export(other, out, format="json")
            exports.append(tmp_path / f"{v}.loomdb.json")
            exports[-1].write_text(out.getvalue())
        first = import_file(loom, exports[0])
        assert first.errors == [] and len(first.trees) == 1
        before = row_counts(loom)
        second = import_file(loom, exports[1])
        (error,) = second.errors
        assert "a different node has this id" in error["reason"]
        assert row_counts(loom) == before

    def test_a_native_tree_id_with_another_root_is_an_error_not_a_second_root(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        exports = []
        for v in ("x", "y"):
            conv = cg_conversation([
                ("root", None, None),
                (f"{v}1", "root", cg_message(f"{v}1", "user", [f"{v} hello"], create_time=T0 + 1)),
            ], conv_id="same", current_node=f"{v}1")
            with loomdb.open(str(tmp_path / f"store-{v}")) as other:
                import_file(other, write_json(tmp_path, f"{v}.json", [conv]))
                out = io.StringIO()
                export(other, out, format="json")
            exports.append(tmp_path / f"{v}.loomdb.json")
            exports[-1].write_text(out.getvalue())
        (tree_id,) = import_file(loom, exports[0]).trees
        before = row_counts(loom)
        second = import_file(loom, exports[1])
        (error,) = second.errors
        assert tree_id in error["reason"] or tree_id in error["where"]
        assert "root" in error["reason"]
        assert row_counts(loom) == before
        assert loom.verify().ok


# ---------------------------------------------------------------- 10: nothing to import


class TestNothingToImport:
    def test_an_empty_conversation_and_an_exact_copy_are_warnings_not_errors(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        empty = cg_conversation([("root", None, None)], conv_id="empty")
        path = write_json(tmp_path, "c.json", [cg_branched("one"), empty, cg_branched("one"),
                                               cg_branched("two")])
        report = import_file(loom, path)
        assert report.errors == [] and len(report.trees) == 2 and report.nodes == 12
        assert report.skipped == 1 + 6  # the empty conversation, the copy's six messages
        empty_w, copy_w = report.warnings
        assert "c.json[1]" in empty_w["where"] and "no messages" in empty_w["reason"]
        assert "c.json[2]" in copy_w["where"] and "exact copy" in copy_w["reason"]
        assert "'one'" in copy_w["reason"]
        assert report.to_json()["warnings"] == report.warnings

    def test_claude_and_openai_jsonl_the_same(self, loom: Loom, tmp_path: Path) -> None:
        chat = claude_conversation("c1", [claude_message("m1", "human", "hi"),
                                          claude_message("m2", "assistant", "hello")])
        report = import_file(loom, write_json(tmp_path, "claude.json", [
            claude_conversation("c0", []), chat, copy.deepcopy(chat)]))
        assert (report.errors, len(report.trees), report.skipped) == ([], 1, 3)
        assert [w["reason"].split()[0] for w in report.warnings] == ["the", "an"]
        line = {"messages": [{"role": "user", "content": "hi"},
                             {"role": "assistant", "content": "hello"}]}
        jsonl = import_file(loom, write_jsonl(tmp_path, "t.jsonl", [line, line]), "openai_jsonl")
        assert (jsonl.errors, len(jsonl.trees), jsonl.nodes, jsonl.skipped) == ([], 1, 2, 2)
        assert "exact copy" in jsonl.warnings[0]["reason"]

    def test_a_tree_twice_in_a_native_export_is_a_warning(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        with loomdb.open(str(tmp_path / "other")) as other:
            import_file(other, write_json(tmp_path, "c.json", [cg_branched()]))
            out = io.StringIO()
            export(other, out, format="jsonl")
        path = tmp_path / "twice.jsonl"
        path.write_text(out.getvalue() * 2)
        report = import_file(loom, path)
        assert (report.errors, len(report.trees), report.nodes, report.skipped) == ([], 1, 6, 6)
        (warning,) = report.warnings
        assert "copy of tree" in warning["reason"] and report.trees[0] in warning["reason"]

    def test_a_copy_of_a_conversation_that_failed_is_not_called_skipped(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        loom.max_content_bytes = 100
        big = cg_branched()
        big["mapping"]["a2"]["message"]["content"]["parts"] = ["x" * 500]
        report = import_file(loom, write_json(tmp_path, "c.json", [big, big]))
        assert report.trees == [] and report.warnings == [] and report.skipped == 0
        assert [e["where"] for e in report.errors] == ["c.json[0] (id conv-1)",
                                                       "c.json[1] (id conv-1)"]

    def test_a_copy_that_differs_is_still_an_error(self, loom: Loom, tmp_path: Path) -> None:
        other = cg_branched()
        other["mapping"]["a2"]["message"]["content"]["parts"] = ["changed"]
        report = import_file(loom, write_json(tmp_path, "c.json", [cg_branched(), other]))
        assert len(report.trees) == 1 and report.warnings == []
        (error,) = report.errors
        assert "appears twice" in error["reason"] and "different content" in error["reason"]

    def test_the_command_line_exits_0_and_prints_the_warnings(
        self, store_url: str, tmp_path: Path
    ) -> None:
        empty = cg_conversation([("root", None, None)], conv_id="empty")
        path = write_json(tmp_path, "c.json", [cg_branched("one"), empty, cg_branched("one")])
        code, out, _ = run_cli(store_url, "import", str(path), "--json")
        summary = json.loads(out)
        assert code == 0 and summary["errors"] == [] and summary["skipped"] == 7
        assert [set(w) for w in summary["warnings"]] == [{"where", "reason"}] * 2
        code, out, _ = run_cli(store_url, "import", str(path))
        assert code == 0 and "2 warning(s):" in out and "no messages" in out
        assert "error" not in out


# ---------------------------------------------------------------- 11: newer exports


def grown_chatgpt(conv: dict[str, Any], extra: list[tuple[str, str, str, str]]) -> dict[str, Any]:
    """A later export of a ChatGPT conversation: `(id, parent, role, text)` added,
    the last one current (what ChatGPT writes after more turns or a regeneration)."""
    conv = copy.deepcopy(conv)
    mapping = conv["mapping"]
    last = max(n["message"]["create_time"] or 0 for n in mapping.values() if n["message"])
    for i, (mid, parent, role, text) in enumerate(extra):
        msg = copy.deepcopy(mapping[conv["current_node"]]["message"])
        msg.update(id=mid, author={"role": role, "name": None, "metadata": {}},
                   create_time=last + 10 + i,
                   content={"content_type": "text", "parts": [text]})
        mapping[mid] = {"id": mid, "message": msg, "parent": parent, "children": []}
        mapping[parent]["children"].append(mid)
    conv["current_node"] = extra[-1][0]
    return conv


class TestNewerExports:
    def chatgpt_sample(self) -> dict[str, Any]:
        (conv,) = load_sample("chatgpt_export_librechat_chatgpt-tree.json")
        return conv  # type: ignore[no-any-return]

    def test_chatgpt_more_turns_add_just_them_and_move_the_session(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        v1 = self.chatgpt_sample()
        (tree_id,) = import_file(loom, write_json(tmp_path, "v1.json", [v1])).trees
        session = import_session(loom, tree_id)
        before = path_sources(loom, session)
        v2 = grown_chatgpt(v1, [("v2-user", v1["current_node"], "user", "another one"),
                                ("v2-bot", "v2-user", "assistant", "here you go")])
        report = import_file(loom, write_json(tmp_path, "v2.json", [v2]))
        assert (report.trees, report.nodes, report.skipped, report.errors) == ([], 2, 12, [])
        assert path_sources(loom, session) == [*before, "v2-user", "v2-bot"]
        assert loom.ref_log(session)[-1].reason.startswith("import:")
        assert loom.tree(tree_id).nodes == 14 and loom.verify().ok

    def test_chatgpt_a_regenerated_answer_moves_the_session_to_it(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        v1 = self.chatgpt_sample()
        (tree_id,) = import_file(loom, write_json(tmp_path, "v1.json", [v1])).trees
        session = import_session(loom, tree_id)
        old_answer = loom.node(session)
        question = v1["mapping"][v1["current_node"]]["parent"]
        v2 = grown_chatgpt(v1, [("regen", question, "assistant", "a better joke")])
        report = import_file(loom, write_json(tmp_path, "v2.json", [v2]))
        assert (report.nodes, report.skipped, report.errors) == (1, 12, [])
        head = loom.node(session)
        assert head.origin["message"] == "regen" and head.parent == old_answer.parent  # type: ignore[index]
        assert path_texts(loom, session)[-1] == "a better joke"
        assert loom.node(old_answer.id).content == old_answer.content  # the old answer stays
        assert len(loom.branch_points(tree_id)) == 2
        again = import_file(loom, write_json(tmp_path, "v3.json", [v2]))
        assert (again.nodes, again.skipped) == (0, 13)

    @pytest.mark.parametrize("use", ["append", "move"])
    def test_a_session_someone_used_stays_where_they_left_it(
        self, loom: Loom, tmp_path: Path, use: str
    ) -> None:
        v1 = self.chatgpt_sample()
        (tree_id,) = import_file(loom, write_json(tmp_path, "v1.json", [v1])).trees
        session = import_session(loom, tree_id)
        if use == "append":
            mine = loom.append(session, "my own follow-up").id
        else:
            mine = loom.node(session).parent  # type: ignore[assignment]
            loom.set_ref(session, mine)
        question = v1["mapping"][v1["current_node"]]["parent"]
        v2 = grown_chatgpt(v1, [("regen", question, "assistant", "a better joke")])
        assert import_file(loom, write_json(tmp_path, "v2.json", [v2])).nodes == 1
        assert loom.ref(session).node == mine

    def claude_sample(self) -> dict[str, Any]:
        convs = load_sample("claude_export_first10.json")
        return next(c for c in convs if len(c["chat_messages"]) >= 6)  # type: ignore[no-any-return]

    @staticmethod
    def claude_turn(uuid: str, sender: str, text: str, at: str) -> dict[str, Any]:
        return claude_message(uuid, sender, text, created_at=at, updated_at=at)

    def test_claude_more_turns_and_a_regenerated_answer(self, loom: Loom, tmp_path: Path) -> None:
        v1 = self.claude_sample()
        n = len(v1["chat_messages"])
        (tree_id,) = import_file(loom, write_json(tmp_path, "v1.json", [v1])).trees
        session = import_session(loom, tree_id)
        v2 = copy.deepcopy(v1)
        v2["chat_messages"] += [self.claude_turn("v2-h", "human", "and then?", "2030-01-01T00:00:00Z"),
                                self.claude_turn("v2-a", "assistant", "then this", "2030-01-01T00:00:01Z")]
        grown = import_file(loom, write_json(tmp_path, "v2.json", [v2]))
        assert (grown.nodes, grown.skipped, grown.errors) == (2, n, [])
        assert path_sources(loom, session)[-2:] == ["v2-h", "v2-a"]
        # a linear export after regenerating the last answer: the old one is gone from it
        v3 = copy.deepcopy(v2)
        v3["chat_messages"][-1] = self.claude_turn("v3-a", "assistant", "then that",
                                                   "2030-01-01T00:00:05Z")
        regen = import_file(loom, write_json(tmp_path, "v3.json", [v3]))
        assert (regen.nodes, regen.skipped, regen.errors) == (1, n + 1, [])
        assert path_sources(loom, session)[-2:] == ["v2-h", "v3-a"]
        assert loom.tree(tree_id).nodes == n + 3 and loom.verify().ok

    def openwebui_sample(self) -> dict[str, Any]:
        """The sample chat (its own id is empty) in the record Open WebUI's export wraps
        each chat in, which carries the chat's id: without an id a newer export could
        not be told from another chat."""
        chat = load_sample("openwebui_export_openwebui-importer_webui-json.json")
        return {"id": "owui-1", "user_id": "u", "title": chat["title"], "chat": chat,
                "created_at": 1_744_577_557, "updated_at": 1_744_577_600}

    def test_openwebui_a_regenerated_answer_and_an_answer_edited_in_place(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        v1 = self.openwebui_sample()
        (tree_id,) = import_file(loom, write_json(tmp_path, "v1.json", [v1])).trees
        session = import_session(loom, tree_id)
        history = v1["chat"]["history"]
        answer = history["messages"][history["currentId"]]
        # regenerate: a sibling answer, now current
        v2 = copy.deepcopy(v1)
        regen = {**copy.deepcopy(answer), "id": "regen", "content": "a regenerated answer",
                 "timestamp": answer["timestamp"] + 60}
        v2["chat"]["history"]["messages"]["regen"] = regen
        v2["chat"]["history"]["messages"][answer["parentId"]]["childrenIds"].append("regen")
        v2["chat"]["history"]["currentId"] = "regen"
        v2["chat"]["messages"] = [*v2["chat"]["messages"], regen]
        report = import_file(loom, write_json(tmp_path, "v2.json", [v2]))
        assert (report.nodes, report.skipped, report.errors) == (1, 2, [])
        assert path_texts(loom, session)[-1] == "a regenerated answer"
        # edit the regenerated answer in place (Open WebUI keeps the id): a version of it
        v3 = copy.deepcopy(v2)
        v3["chat"]["history"]["messages"]["regen"]["content"] = "an edited answer"
        report = import_file(loom, write_json(tmp_path, "v3.json", [v3]))
        assert (report.nodes, report.skipped, report.errors) == (1, 2, [])
        head = loom.node(session)
        assert head.content == [{"type": "text", "text": "an edited answer"}]
        assert head.origin["message"] == "regen"  # type: ignore[index]
        assert loom.node(head.edited_from).content[0]["text"] == "a regenerated answer"  # type: ignore[arg-type]
        assert loom.tree(tree_id).nodes == 4 and loom.verify().ok


    def test_librechat_a_regenerated_answer_in_the_nested_tree(
        self, loom: Loom, tmp_path: Path
    ) -> None:
        v1 = load_sample("librechat_export_librechat-tree.json")
        (tree_id,) = import_file(loom, write_json(tmp_path, "v1.json", v1)).trees
        session = import_session(loom, tree_id)
        v2 = copy.deepcopy(v1)
        question = v2["messages"][0]["children"][0]["children"][0]["children"][1]["children"][0]
        answer = copy.deepcopy(question["children"][0])
        answer.update(messageId="regen", parentMessageId=question["messageId"], children=[],
                      text="a regenerated answer", createdAt="2030-01-01T00:00:00.000Z")
        question["children"].append(answer)
        report = import_file(loom, write_json(tmp_path, "v2.json", v2))
        assert (report.trees, report.nodes, report.skipped, report.errors) == ([], 1, 9, [])
        assert path_sources(loom, session)[-2:] == [question["messageId"], "regen"]
        assert len(loom.branch_points(tree_id)) == 3 and loom.verify().ok


def test_report_keeps_its_documented_keys() -> None:
    assert set(ImportReport().to_json()) == {"trees", "nodes", "blobs", "skipped", "errors",
                                             "warnings"}
