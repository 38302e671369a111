"""A logs.db of simonw/llm 0.31 (before the message store): its tool calls, tool results,
attachments and fragments come along, counted against the database with SQL.

The installed llm is newer, so the database is made with llm's own migrations list up to
the last one 0.31 had (`m022_response_reasoning`; `m023_message_store` is 0.32's), and
its rows are the ones llm 0.31's `Response.log_to_db` writes: a response's `tool_calls`
are the calls it made, its `tool_results` the results its prompt carried."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

# the llm package is a test dependency: missing, the test fails (never skips)
import sqlite_utils  # noqa: E402
from llm import migrations  # noqa: E402

from loomdb import Loom

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154"
    "78da63f8cfc0f01f0005000201ff0f5f6c0000000049454e44ae426082")


def logs_031(path: Path) -> Any:
    """A logs.db with llm 0.31's schema: llm's migrations, stopping where 0.32 began."""
    db = sqlite_utils.Database(path)
    migrations.ensure_migrations_table(db)
    for step in migrations.MIGRATIONS:
        if step.__name__ == "m023_message_store":
            break
        step(db)
        db["_llm_migrations"].insert({"name": step.__name__, "applied_at": "2025-09-01"})
    assert "messages" not in db.table_names() and "tool_results_attachments" in db.table_names()
    return db


def chain(db: Any) -> None:
    """One conversation, as `llm -T add --chain` logs it: the first response calls two
    tools, the second carries their results (one with an image, one an error) and calls
    one more, the third carries that result and answers; the first prompt has a
    fragment and two attachments (one with its bytes, one only a URL)."""
    db["conversations"].insert({"id": "c1", "name": "sums", "model": "gpt-4o-mini"})
    rows = [("r1", "add these", "be brief", ""), ("r2", "", None, ""),
            ("r3", "", None, "The sum is 6.")]
    for i, (rid, prompt, system, response) in enumerate(rows):
        db["responses"].insert({
            "id": rid, "model": "gpt-4o-mini", "prompt": prompt, "system": system,
            "response": response, "conversation_id": "c1",
            "datetime_utc": f"2025-09-01T10:00:0{i}", "input_tokens": 5, "output_tokens": 3,
            "reasoning": "adding up" if rid == "r3" else None})
    db["tools"].insert({"id": 1, "hash": "h", "name": "add", "description": "Add.",
                        "input_schema": "{}", "plugin": None})
    for rid, call, args in [("r1", "call_a", {"a": 1, "b": 2}), ("r1", "call_b", {"a": 2}),
                            ("r2", "call_c", {"a": 3, "b": 3})]:
        db["tool_calls"].insert({"response_id": rid, "tool_id": 1, "name": "add",
                                 "arguments": json.dumps(args), "tool_call_id": call})
    for rid, call, output, exception in [("r2", "call_a", "3", None),
                                         ("r2", "call_b", "", "TypeError: b missing"),
                                         ("r3", "call_c", "6", None)]:
        db["tool_results"].insert({"response_id": rid, "tool_id": 1, "name": "add",
                                   "output": output, "tool_call_id": call,
                                   "exception": exception})
    db["attachments"].insert_all([
        {"id": "att-png", "type": "image/png", "path": None, "url": None, "content": PNG},
        {"id": "att-url", "type": "image/jpeg", "path": None,
         "url": "https://example.com/cat.jpg", "content": None},
        {"id": "att-result", "type": "image/png", "path": "/tmp/plot.png", "url": None,
         "content": PNG + b"\x00"}])
    db["prompt_attachments"].insert_all([
        {"response_id": "r1", "attachment_id": "att-png", "order": 0},
        {"response_id": "r1", "attachment_id": "att-url", "order": 1}])
    db["tool_results_attachments"].insert({"tool_result_id": 1, "attachment_id": "att-result",
                                           "order": 0})
    db["fragments"].insert({"id": 1, "hash": "f", "content": "numbers: 1 2 3",
                            "datetime_utc": "2025-09-01", "source": "-"})
    db["prompt_fragments"].insert({"response_id": "r1", "fragment_id": 1, "order": 0})


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The logs.db's bytes, made once (llm's migrations take a second or two)."""
    path = tmp_path_factory.mktemp("llm031") / "logs.db"
    db = logs_031(path)
    chain(db)
    db.close()
    return path.read_bytes()


def copy_of(made: bytes, tmp_path: Path) -> Any:
    (tmp_path / "logs.db").write_bytes(made)
    return sqlite_utils.Database(tmp_path / "logs.db")


def test_tool_calls_results_and_attachments_of_llm_031_are_kept(
    loom: Loom, tmp_path: Path, made: bytes
) -> None:
    db = copy_of(made, tmp_path)
    count = {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
             for t in ("tool_calls", "tool_results", "prompt_attachments",
                       "tool_results_attachments")}
    assert count == {"tool_calls": 3, "tool_results": 3, "prompt_attachments": 2,
                     "tool_results_attachments": 1}
    db.close()
    report = loom.import_file(tmp_path / "logs.db")
    assert report.errors == [] and report.warnings == [] and len(report.trees) == 1
    nodes = sorted(loom.tree_nodes(report.trees[0]), key=lambda n: n.depth)
    blocks = [b for n in nodes for b in n.content]
    inner = [p for b in blocks if b["type"] == "tool_result" for p in b["content"]]
    assert len([b for b in blocks if b["type"] == "tool_use"]) == count["tool_calls"]
    assert len([b for b in blocks if b["type"] == "tool_result"]) == count["tool_results"]
    images = [b for b in blocks + inner if b["type"] == "image"]
    assert len(images) == 2 and loom.blob(images[0]["ref"]) == PNG
    assert any("https://example.com/cat.jpg" in b.get("text", "") for b in blocks)
    assert [n.role for n in nodes] == ["user", "assistant", "tool", "assistant", "tool",
                                       "assistant"]
    assert nodes[0].content[0] == {"type": "text", "text": "numbers: 1 2 3\nadd these"}
    error = next(b for b in blocks if b["type"] == "tool_result" and b.get("is_error"))
    assert error["tool_use_id"] == "call_b"
    assert nodes[-1].content[0] == {"type": "thinking", "thinking": "adding up"}
    assert loom.import_file(tmp_path / "logs.db").nodes == 0


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)  # the format, not the store
def test_a_tool_row_whose_response_is_gone_is_reported_not_dropped(
    loom: Loom, tmp_path: Path, made: bytes
) -> None:
    db = copy_of(made, tmp_path)
    db["tool_calls"].insert({"response_id": "gone", "tool_id": 1, "name": "add",
                             "arguments": "{}", "tool_call_id": "call_x"})
    db.close()
    report = loom.import_file(tmp_path / "logs.db")
    assert len(report.trees) == 1
    assert [e["where"] for e in report.errors] == ["logs.db tool_calls"]
    assert "1 row(s) name a response that is not in the database" in report.errors[0]["reason"]
