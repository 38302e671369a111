"""simonw/llm's logs.db: a real database written by the `llm` package itself (with the
`llm-echo` model plugin, nothing over the network), imported into a real store of each
backend. Expected counts are read from the logs.db with SQL, not from the importer."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from store_counts import Counts, store_counts

from format_samples import llm_tables
from loomdb import Loom
from loomdb.errors import InvalidInput

llm = pytest.importorskip("llm", reason="the llm package is a test dependency (pip install llm)")
pytest.importorskip("llm_echo", reason="the llm-echo plugin is a test dependency")
sqlite_utils = pytest.importorskip("sqlite_utils")

from llm.logs import LogStore  # noqa: E402
from llm.parts import Message, TextPart  # noqa: E402

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154"
    "78da63f8cfc0f01f0005000201ff0f5f6c0000000049454e44ae426082")


def add(a: int, b: int) -> int:
    "Add two numbers."
    return a + b


class LogsDb:
    """A logs.db written through llm's own API."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = sqlite_utils.Database(path)
        self.store = LogStore(self.db)
        self.model = llm.get_model("echo")

    def conversation(self) -> str:
        """System prompt, reasoning, a tool call and its result: returns the thread id."""
        conv = self.model.conversation()
        first = conv.prompt("hello", system="be brief", thinking=True)
        first.text()
        first.log_to_db(self.db)
        chain = conv.chain(json.dumps({"prompt": "sum", "tool_calls": [
            {"name": "add", "arguments": {"a": 1, "b": 2}}]}), tools=[add])
        chain.text()
        for response in chain.responses():
            response.log_to_db(self.db)
        return str(conv.id)

    def with_image(self) -> None:
        response = self.model.prompt("look", attachments=[llm.Attachment(content=PNG,
                                                                         type="image/png")])
        response.text()
        response.log_to_db(self.db)

    def fork(self, thread: str, at_role: str = "assistant") -> str:
        """A second thread from the first `at_role` message of `thread`, continued."""
        chain = self.store.thread_messages(thread)
        tip = self.store.thread_tip(thread)
        hashes = self._chain_hashes(tip)
        index = next(i for i, m in enumerate(chain) if m.role == at_role)
        fork = self.store.fork(hashes[index], name="fork", forked_from=thread)
        self.store.append(fork, [Message(role="user", parts=[TextPart(text="another way?")])])
        return fork

    def _chain_hashes(self, tip: str | None) -> list[str]:
        out: list[str] = []
        while tip is not None:
            out.append(tip)
            tip = self.db.execute("SELECT parent_hash FROM messages WHERE hash = ?",
                                  [tip]).fetchone()[0]
        return list(reversed(out))

    def legacy(self, conv_id: str, name: str, pairs: list[tuple[str, str]]) -> None:
        """Rows in the legacy tables, as llm before 0.32 wrote them."""
        self.db["conversations"].insert({"id": conv_id, "name": name, "model": "gpt-4o-mini"})
        for i, (prompt, response) in enumerate(pairs):
            self.db["responses"].insert({
                "id": f"{conv_id}-r{i}", "model": "gpt-4o-mini", "prompt": prompt,
                "system": "Be terse." if i == 0 else None, "response": response,
                "conversation_id": conv_id, "datetime_utc": f"2024-05-01T10:00:0{i}",
                "input_tokens": 3, "output_tokens": 5, "duration_ms": 10,
            })

    def expected(self) -> Counts:
        """Counted from the database: trees = roots plus legacy conversations not also
        threads; nodes = messages plus two per legacy response; branches; tool parts."""
        q = self.db.execute

        def one(sql: str) -> int:
            return int(q(sql).fetchone()[0])
        legacy_convs = one("SELECT count(DISTINCT conversation_id) FROM responses WHERE "
                           "conversation_id NOT IN (SELECT id FROM threads)")
        legacy_rows = one("SELECT count(*) FROM responses WHERE conversation_id NOT IN "
                          "(SELECT id FROM threads)")
        return Counts(
            sessions=one("SELECT count(*) FROM messages WHERE parent_hash IS NULL") + legacy_convs,
            nodes=one("SELECT count(*) FROM messages") + 2 * legacy_rows,
            branches=one("SELECT count(*) FROM (SELECT parent_hash FROM messages WHERE "
                         "parent_hash IS NOT NULL GROUP BY parent_hash HAVING count(*) > 1)"),
            child_trees=0, compactions=0,
            tool_calls=one("SELECT count(*) FROM parts WHERE type = 'tool_call'"),
            tool_results=one("SELECT count(*) FROM parts WHERE type = 'tool_result'"),
        )


@pytest.fixture
def logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LogsDb:
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm-home"))
    return LogsDb(tmp_path / "logs.db")


def sessions(loom: Loom) -> dict[str, Any]:
    return {r.name: r for t in loom.trees() for r in loom.refs("session", t.id)}


def test_the_message_store_lands_with_its_counts(loom: Loom, logs: LogsDb) -> None:
    thread = logs.conversation()
    logs.with_image()
    logs.fork(thread)
    want = logs.expected()
    assert want.branches == 1 and want.tool_calls == 1 and want.tool_results == 1
    report = loom.import_file(logs.path)
    assert report.errors == [] and report.warnings == []
    assert report.blobs == 1
    assert store_counts(loom) == want
    assert loom.verify().ok
    again = loom.import_file(logs.path)
    assert (again.nodes, again.trees, again.skipped) == (0, [], report.nodes)


def test_threads_are_sessions_and_a_fork_is_a_second_session_in_the_same_tree(
    loom: Loom, logs: LogsDb
) -> None:
    thread = logs.conversation()
    fork = logs.fork(thread)
    loom.import_file(logs.path)
    refs = sessions(loom)
    assert len(refs) == 2
    by_head = {r.origin["imported"]["head"]: r for r in refs.values()}
    assert set(by_head) == {thread, fork}
    assert by_head[fork].origin["imported"]["forked_from"] == thread
    assert by_head[fork].tree == by_head[thread].tree
    forked = [m["content"][0].get("text") for m in loom.context(by_head[fork].name)["messages"]]
    assert forked[:2] == ["be brief", "hello"] and forked[-1] == "another way?"


def test_turns_give_answers_their_model_usage_and_time(loom: Loom, logs: LogsDb) -> None:
    logs.conversation()
    loom.import_file(logs.path)
    nodes = [n for t in loom.trees() for n in loom.tree_nodes(t.id)]
    answers = [n for n in nodes if n.role == "assistant"]
    # an answer a turn wrote (between the turn's parent and its tip) is authored by its
    # model; llm 0.36 records a chained tool call's answer only as the next turn's input
    recorded = logs.db.execute(
        "SELECT count(*) FROM turns t JOIN messages m ON m.hash = t.tip_message_hash "
        "WHERE m.role = 'assistant'").fetchone()[0]
    by_turn = [n for n in answers if "turn" in (n.provenance.get("metadata") or {})]
    assert len(by_turn) == recorded >= 1 and all(n.author == "echo" for n in by_turn)
    turn = by_turn[0].provenance["metadata"]["turn"]
    assert turn["model"] == "echo" and "input_tokens" in turn
    first_turn = logs.db.execute("SELECT min(datetime_utc) FROM turns").fetchone()[0]
    root = min(nodes, key=lambda n: n.depth)
    assert root.created_at[:19] == first_turn[:19]
    kinds = sorted(b["type"] for n in answers for b in n.content)
    assert "thinking" in kinds and "tool_use" in kinds


def test_a_thread_that_went_on_adds_only_its_new_messages_and_moves(
    loom: Loom, logs: LogsDb
) -> None:
    thread = logs.conversation()
    loom.import_file(logs.path)
    logs.store.append(thread, [Message(role="user", parts=[TextPart(text="one more")])])
    grown = loom.import_file(logs.path)
    assert (grown.nodes, grown.errors) == (1, [])
    (ref,) = sessions(loom).values()
    assert loom.node(ref.name).content == [{"type": "text", "text": "one more"}]


def test_legacy_conversations_are_linear_trees_and_are_read_once(
    loom: Loom, logs: LogsDb
) -> None:
    thread = logs.conversation()
    logs.legacy("01legacyconversation", "Old chat", [("hi", "hello!"), ("bye", "see you")])
    logs.legacy(thread, "also in the message store", [("hello", "dup")])
    want = logs.expected()
    report = loom.import_file(logs.path)
    assert report.errors == []
    assert store_counts(loom) == want
    legacy = next(t for t in loom.trees() if t.title == "Old chat")
    assert legacy.system == "Be terse."
    texts = [n.content[0]["text"] for n in sorted(loom.tree_nodes(legacy.id),
                                                  key=lambda n: n.depth)]
    assert texts == ["hi", "hello!", "bye", "see you"]
    assert loom.import_file(logs.path).nodes == 0


def test_messages_under_a_missing_parent_are_reported_not_dropped(
    loom: Loom, logs: LogsDb
) -> None:
    logs.conversation()
    logs.db.execute("INSERT INTO messages (hash, parent_hash, role) VALUES ('b2:orphan', "
                    "'b2:nothing', 'user')")
    logs.db.conn.commit()
    report = loom.import_file(logs.path)
    assert len(report.trees) == 1 and len(report.errors) == 1
    assert "1 message(s) hang from a parent hash" in report.errors[0]["reason"]


def test_a_malformed_part_fails_its_tree_only(loom: Loom, logs: LogsDb) -> None:
    logs.conversation()
    logs.with_image()
    logs.db.execute("UPDATE parts SET payload = ? WHERE type = 'attachment'",
                    ["[" * 5000 + "]" * 5000])
    logs.db.conn.commit()
    report = loom.import_file(logs.path)
    assert len(report.trees) == 1 and len(report.errors) == 1
    assert "part 1: nested deeper than" in report.errors[0]["reason"]


def test_another_programs_sqlite_file_is_refused_and_nothing_written(
    loom: Loom, tmp_path: Path
) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE notes (body TEXT)")
    with pytest.raises(InvalidInput, match="not simonw/llm's logs.db"):
        loom.import_file(other)
    assert loom.trees() == []


def test_a_crafted_database_whose_hashes_loop_is_refused_not_followed(
    loom: Loom, tmp_path: Path
) -> None:
    path = tmp_path / "crafted.db"
    with sqlite3.connect(path) as db:  # llm's tables without their keys: a hash twice
        llm_tables(db)
        db.executemany("INSERT INTO messages VALUES (?, ?, ?, NULL)",
                       [("r", None, "user"), ("x", "r", "assistant"), ("r", "x", "user")])
    report = loom.import_file(path)
    assert report.trees == [] and len(report.errors) == 1
    assert "duplicate message ids: r" in report.errors[0]["reason"]
    assert loom.trees() == []


def test_a_damaged_logs_db_is_one_line_and_nothing_written(loom: Loom, logs: LogsDb) -> None:
    logs.conversation()
    logs.db.close()
    data = logs.path.read_bytes()
    logs.path.write_bytes(data[:4096])  # the first page only: the tables' pages are gone
    with pytest.raises(InvalidInput, match="SQLite database"):
        loom.import_file(logs.path)
    assert loom.trees() == []
