"""One small, well-formed sample per format of `loomdb.interop.formats.REGISTRY`, for
the tests that must reach every format (detection, fuzzing). The real files in
tests/fixtures are used where there are some; the others are made here, as small as
their format allows. `missing()` names any format without a sample, so a format added
to the registry fails those tests until it has one."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from loomdb.interop.formats import REGISTRY

FIXTURES = Path(__file__).parent / "fixtures"
WRITTEN = FIXTURES / "agent-sessions" / "written"


def fixture_files() -> dict[Path, str]:
    """Every import fixture of tests/fixtures -> the format it is."""
    out: dict[Path, str] = {}
    for f in sorted((FIXTURES / "interop").iterdir()):
        if f.suffix in (".json", ".jsonl"):
            out[f] = "openai_jsonl" if f.name.startswith("openai_jsonl") else f.name.split("_")[0]
    agents = {"claude-code": "claude_code", "written": "claude_code", "codex": "codex",
              "pi": "pi"}
    for folder, fmt in agents.items():
        for f in sorted((FIXTURES / "agent-sessions" / folder).rglob("*.jsonl")):
            out[f] = fmt
    return out


def _lines(*records: object) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def made(tmp: Path) -> dict[str, Path]:
    """Hand-made samples (small) of every format, by format name."""
    tmp.mkdir(parents=True, exist_ok=True)
    sid = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
    texts: dict[str, bytes] = {
        "chatgpt": json.dumps([{"id": "c1", "title": "t", "current_node": "b", "mapping": {
            "a": {"id": "a", "parent": None, "children": ["b"], "message": {
                "id": "a", "author": {"role": "user"}, "content": {
                    "content_type": "text", "parts": ["Hi?"]}}},
            "b": {"id": "b", "parent": "a", "children": [], "message": {
                "id": "b", "author": {"role": "assistant"}, "content": {
                    "content_type": "text", "parts": ["Hello."]}}}}}]).encode(),
        "claude": json.dumps([{"uuid": "c1", "name": "t", "chat_messages": [
            {"uuid": "m1", "sender": "human", "text": "Hi?"},
            {"uuid": "m2", "sender": "assistant", "text": "Hello."}]}]).encode(),
        "claude_code": _lines(
            {"type": "queue-operation", "operation": "enqueue", "sessionId": sid,
             "timestamp": "2026-01-01T00:00:00Z", "content": "Hi?"},
            {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": sid,
             "timestamp": "2026-01-01T00:00:01Z", "message": {"role": "user", "content": "Hi?"}},
            {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": sid,
             "timestamp": "2026-01-01T00:00:02Z", "message": {
                 "id": "msg1", "role": "assistant", "model": "m",
                 "content": [{"type": "text", "text": "Hello."}]}}),
        "openwebui": json.dumps([{"id": "w1", "title": "t", "chat": {"history": {
            "currentId": "b", "messages": {
                "a": {"id": "a", "parentId": None, "childrenIds": ["b"], "role": "user",
                      "content": "Hi?"},
                "b": {"id": "b", "parentId": "a", "childrenIds": [], "role": "assistant",
                      "content": "Hello."}}}}}]).encode(),
        "librechat": json.dumps({"conversationId": "l1", "title": "t", "messages": [
            {"messageId": "a", "parentMessageId": "00000000-0000-0000-0000-000000000000",
             "isCreatedByUser": True, "text": "Hi?"},
            {"messageId": "b", "parentMessageId": "a", "isCreatedByUser": False,
             "text": "Hello."}]}).encode(),
        "loom": json.dumps({"root": {"text": "Once", "children": [
            {"id": "a1", "text": " upon", "children": []}]}}).encode(),
        "oasst": _lines({"message_tree_id": "t", "prompt": {
            "message_id": "t", "role": "prompter", "text": "Hi?", "replies": [
                {"message_id": "r", "role": "assistant", "text": "Hello.", "replies": []}]}}),
        "sharegpt": json.dumps([{"conversations": [
            {"from": "human", "value": "Hi?"}, {"from": "gpt", "value": "Hello."}]}]).encode(),
        "openai_jsonl": _lines(*[{"messages": [{"role": "user", "content": "Hi?"},
                                               {"role": "assistant", "content": "Hello."}]}] * 2),
        "chatbot_ui": json.dumps({"version": 4, "folders": [], "history": [
            {"id": "h1", "name": "t", "messages": [{"role": "user", "content": "Hi?"},
                                                  {"role": "assistant", "content": "Hello."}]}]
        }).encode(),
        "codex": _lines(
            {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta",
             "payload": {"id": "019a93b9-f380-7600-98ff-940e6b99603c",
                         "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w"}},
            {"timestamp": "2026-01-01T00:00:01Z", "type": "response_item", "payload": {
                "type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "Hi?"}]}},
            {"timestamp": "2026-01-01T00:00:02Z", "type": "response_item", "payload": {
                "type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": "Hello."}]}}),
        "pi": _lines(
            {"type": "session", "id": "p1", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w"},
            {"type": "message", "id": "e1", "parentId": None,
             "timestamp": "2026-01-01T00:00:01Z",
             "message": {"role": "user", "content": [{"type": "text", "text": "Hi?"}]}},
            {"type": "message", "id": "e2", "parentId": "e1",
             "timestamp": "2026-01-01T00:00:02Z",
             "message": {"role": "assistant", "content": [{"type": "text", "text": "Hello."}]}}),
    }
    out: dict[str, Path] = {}
    for fmt, data in texts.items():
        path = tmp / f"{fmt}.sample"  # a name that says nothing: detection reads the content
        path.write_bytes(data)
        out[fmt] = path
    out["llm"] = llm_db(tmp / "llm.sample")
    return out


def llm_db(path: Path) -> Path:
    """A logs.db of llm's message store: one user message and its answer."""
    with sqlite3.connect(path) as db:
        llm_tables(db)
        db.executemany("INSERT INTO messages VALUES (?, ?, ?, NULL)",
                       [("h1", None, "user"), ("h2", "h1", "assistant")])
        db.executemany("INSERT INTO parts (message_hash, position, type, text) VALUES "
                       "(?, 0, 'text', ?)", [("h1", "Hi?"), ("h2", "Hello.")])
        db.execute("INSERT INTO threads VALUES ('t1', NULL, 'h2', NULL, '2026-01-01T00:00:00')")
    db.close()
    return path


def llm_tables(db: sqlite3.Connection) -> None:
    """llm's message store tables, without their keys or indexes (as a crafted file may be)."""
    db.execute("CREATE TABLE messages (hash TEXT, parent_hash TEXT, role TEXT, "
               "provider_metadata TEXT)")
    db.execute("CREATE TABLE parts (id INTEGER PRIMARY KEY, message_hash TEXT, "
               "position INTEGER, type TEXT, tool_name TEXT, text TEXT, payload TEXT)")
    db.execute("CREATE TABLE threads (id TEXT, name TEXT, tip_message_hash TEXT, "
               "forked_from TEXT, datetime_utc TEXT)")
    db.execute("CREATE TABLE turns (id TEXT, thread_id TEXT, parent_message_hash TEXT, "
               "tip_message_hash TEXT, model TEXT, resolved_model TEXT, options_json TEXT, "
               "input_tokens INT, output_tokens INT, duration_ms INT, datetime_utc TEXT)")


def missing(names: set[str]) -> set[str]:
    """Formats of the registry without a sample among `names`."""
    return {f.name for f in REGISTRY} - names
