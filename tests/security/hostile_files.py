"""Hostile import files of issue 32 (work budgets), each beside a well-formed file of
the same size: shared by tests/security/test_import_budgets.py (small sizes) and
benchmarks/bench_hostile_imports.py (the sizes of the report).

Each maker writes `path` at about `size` bytes and returns it."""

from __future__ import annotations

import json
import sqlite3
import zipfile
from pathlib import Path
from typing import Any

SID = "7ef6e323-e93c-4c64-b398-36d44f4817fc"
#: a value that is small as JSON and large as Python objects (one small dict per item)
SMALL_ITEMS = [{"a": i} for i in range(2000)]


def _lines(path: Path, head: list[Any], filler: Any, size: int) -> Path:
    line = json.dumps(filler) + "\n"
    with path.open("w") as out:
        for record in head:
            out.write(json.dumps(record) + "\n")
        for _ in range(max(1, size // len(line))):
            out.write(line)
    return path


def codex_rollout(path: Path, size: int, *, hostile: bool) -> Path:
    """A Codex rollout: event values full of small objects (hostile: folded whole they
    take ~50 times their size), or the same size of ordinary messages."""
    head = [{"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta",
             "payload": {"id": "019a93b9-f380-7600-98ff-940e6b99603c",
                         "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w"}},
            _codex_message("user", "Hi?")]
    filler = ({"timestamp": "2026-01-01T00:00:01Z", "type": "event_msg",
               "payload": {"type": "token_count", "info": SMALL_ITEMS}} if hostile
              else _codex_message("assistant", "lorem ipsum " * 1500))
    return _lines(path, head, filler, size)


def _codex_message(role: str, text: str) -> dict[str, Any]:
    kind = "input_text" if role == "user" else "output_text"
    return {"timestamp": "2026-01-01T00:00:01Z", "type": "response_item", "payload": {
        "type": "message", "role": role, "content": [{"type": kind, "text": text}]}}


def claude_code_session(path: Path, size: int, *, hostile: bool) -> Path:
    """A Claude Code session: bookkeeping lines full of small objects (hostile), or the
    same size of ordinary answers (each line its own message)."""
    head = [{"type": "queue-operation", "operation": "enqueue", "sessionId": SID,
             "timestamp": "2026-01-01T00:00:00Z"},
            {"type": "user", "uuid": "u0", "parentUuid": None, "sessionId": SID,
             "timestamp": "2026-01-01T00:00:01Z", "message": {"role": "user", "content": "Hi?"}}]
    if hostile:
        filler = {"type": "progress", "sessionId": SID, "data": SMALL_ITEMS}
        return _lines(path, head, filler, size)
    text = "lorem ipsum " * 1500
    with path.open("w") as out:
        for record in head:
            out.write(json.dumps(record) + "\n")
        parent, written, n = "u0", 0, 0
        while written < size:
            n += 1
            line = json.dumps({"type": "assistant", "uuid": f"a{n}", "parentUuid": parent,
                               "sessionId": SID, "timestamp": "2026-01-01T00:00:02Z",
                               "message": {"id": f"msg{n}", "role": "assistant", "model": "m",
                                           "content": [{"type": "text", "text": text}]}}) + "\n"
            out.write(line)
            parent, written = f"a{n}", written + len(line)
    return path


def pi_session(path: Path, size: int, *, hostile: bool) -> Path:
    """A pi session: custom entries full of small objects (hostile), or the same size of
    ordinary answers."""
    head = [{"type": "session", "id": "p1", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w"},
            {"type": "message", "timestamp": "2026-01-01T00:00:01Z",
             "message": {"role": "user", "content": [{"type": "text", "text": "Hi?"}]}}]
    filler = ({"type": "custom", "timestamp": "2026-01-01T00:00:02Z", "data": SMALL_ITEMS}
              if hostile else
              {"type": "message", "timestamp": "2026-01-01T00:00:02Z", "message": {
                  "role": "assistant", "content": [{"type": "text", "text": "lorem " * 3000}]}})
    return _lines(path, head, filler, size)


def chatgpt_zip(path: Path, member: int, pointers: int, *, hostile: bool) -> Path:
    """A ChatGPT export zip: `pointers` image parts all naming one `member`-byte file
    (hostile: each pointer would decompress it again), or each naming its own file of
    the same compressed size."""
    parts = [{"content_type": "image_asset_pointer",
              "asset_pointer": f"file-service://file-{0 if hostile else i}"}
             for i in range(pointers)]
    conv = {"id": "c1", "title": "pictures", "current_node": "m", "mapping": {
        "m": {"id": "m", "parent": None, "children": [], "message": {
            "id": "m", "author": {"role": "user"},
            "content": {"content_type": "multimodal_text", "parts": parts}}}}}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("conversations.json", json.dumps([conv]))
        if hostile:
            zf.writestr("file-0-picture.png", b"\0" * member)
        else:
            each = max(1, member // 1000 // pointers)  # zeros compress ~1000:1
            for i in range(pointers):
                zf.writestr(f"file-{i}-picture.png", b"\0" * each * 1000)
    return path


def llm_logs(path: Path, roots: int, *, duplicates: bool = False, hostile: bool = True) -> Path:
    """A logs.db of llm's message store without llm's keys or indexes: `roots` trees of
    a question and its answer, each with one part and a thread. `duplicates`: every
    hash stored twice. Not hostile: the same rows with llm's keys and indexes."""
    from format_samples import llm_tables

    with sqlite3.connect(path) as db:
        llm_tables(db)
        if not hostile:
            db.execute("CREATE INDEX messages_parent ON messages(parent_hash)")
            db.execute("CREATE INDEX parts_message ON parts(message_hash)")
        rows = [(f"q{i}", None, "user") for i in range(roots)]
        rows += [(f"a{i}", f"q{i}", "assistant") for i in range(roots)]
        if duplicates:
            rows += rows
        db.executemany("INSERT INTO messages VALUES (?, ?, ?, NULL)", rows)
        db.executemany("INSERT INTO parts (message_hash, position, type, text) VALUES "
                       "(?, 0, 'text', ?)", [(h, f"text of {h}") for h, _, _ in rows])
        db.executemany("INSERT INTO threads VALUES (?, NULL, ?, NULL, '2026-01-01T00:00:00')",
                       [(f"t{i}", f"a{i}") for i in range(roots)])
    db.close()
    return path
