"""The Claude Code part of the import benchmark: a generated 3 MB session file.

The session has the shapes of a real 2.x one: each reply written as several lines
sharing `message.id` (thinking, text, tool calls; some replies call tools in parallel),
each tool result under its call, `attachment` and `progress` lines between them, a
compaction (boundary + summary) half-way, and one subagent in `<session>/subagents/`.
`bench_import.py` runs `measure` in child processes beside the floor: `json.loads` of
every line of the same bytes.
"""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path
from typing import Any

SESSION = "0b5e55a1-0000-4000-8000-000000000001"
WORDS = ("parse config module build test import branch commit session file line reply "
         "tool result thinking compile error fix check path tree node").split()


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


class _Writer:
    def __init__(self, fh: Any, rng: random.Random, session: str, sidechain: bool) -> None:
        self.fh, self.rng, self.session, self.sidechain = fh, rng, session, sidechain
        self.n = 0
        self.last: str | None = None

    def line(self, parent: str | None, **fields: Any) -> str:
        self.n += 1
        uid = str(uuid.UUID(int=self.rng.getrandbits(128)))
        row = {"parentUuid": parent, "isSidechain": self.sidechain, "userType": "external",
               "cwd": "/home/dev/app", "sessionId": self.session, "version": "2.1.3",
               "gitBranch": "main", **fields, "uuid": uid,
               "timestamp": f"2026-01-0{1 + self.n // 80000}T{(self.n // 3600) % 24:02d}:"
                            f"{(self.n // 60) % 60:02d}:{self.n % 60:02d}.000Z"}
        self.fh.write(json.dumps(row) + "\n")
        self.last = uid
        return uid

    def turn(self, messages: list[int], calls_per_reply: int) -> None:
        """A user turn and the replies (with tool calls and results) that answer it."""
        rng = self.rng
        self.last = self.line(self.last, type="user",
                              message={"role": "user", "content": _text(rng, 25)})
        messages[0] += 1
        for step in range(3):
            mid = "msg_" + uuid.UUID(int=rng.getrandbits(128)).hex[:24]

            def reply(block: dict[str, Any], mid: str = mid) -> dict[str, Any]:
                return {"id": mid, "type": "message", "role": "assistant",
                        "model": "claude-sonnet-4-5", "content": [block], "stop_reason": None,
                        "usage": {"input_tokens": 1200, "output_tokens": 300}}

            self.line(self.last, type="assistant",
                      message=reply({"type": "thinking", "thinking": _text(rng, 60),
                                     "signature": "sig" + "x" * 40}))
            self.line(self.last, type="assistant", message=reply({"type": "text",
                                                                  "text": _text(rng, 40)}))
            messages[0] += 1
            if step == 2:
                return
            calls = []
            for _ in range(calls_per_reply):
                cid = "toolu_" + uuid.UUID(int=rng.getrandbits(128)).hex[:24]
                calls.append((cid, self.line(self.last, type="assistant", message=reply(
                    {"type": "tool_use", "id": cid, "name": "Bash",
                     "input": {"command": _text(rng, 6)}}))))
            for cid, parent in calls:
                out = {"type": "tool_result", "tool_use_id": cid, "content": _text(rng, 120)}
                self.line(parent, type="user", message={"role": "user", "content": [out]})
                self.line(self.last, type="progress", data={"type": "hook_progress"})
            messages[0] += 1
            self.line(self.last, type="attachment", attachment={"type": "todo", "items": []})


def generate(folder: Path, target_bytes: int = 3_000_000, seed: int = 11) -> tuple[Path, int]:
    """Write the session (and its subagent) under `folder`; (session file, messages)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{SESSION}.jsonl"
    messages = [0]
    with path.open("w", encoding="utf-8") as fh:
        w = _Writer(fh, rng, SESSION, False)
        w.turn(messages, calls_per_reply=1)
        task = {"id": "msg_task", "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5", "stop_reason": "tool_use",
                "content": [{"type": "tool_use", "id": "toolu_task", "name": "Task",
                             "input": {"prompt": "Survey the code", "description": "survey"}}]}
        call = w.line(w.last, type="assistant", message=task)
        w.line(call, type="user", toolUseResult={"agentId": "b3nch0001"},
               message={"role": "user", "content": [{"type": "tool_result",
                                                     "tool_use_id": "toolu_task",
                                                     "content": "Surveyed."}]})
        messages[0] += 2
        compacted = False
        while fh.tell() < target_bytes:
            w.turn(messages, calls_per_reply=1 + w.n % 3)
            if not compacted and fh.tell() > target_bytes // 2:
                before = w.last
                boundary = w.line(None, type="system", subtype="compact_boundary",
                                  content="Conversation compacted", logicalParentUuid=before,
                                  compactMetadata={"trigger": "auto", "preTokens": 150000})
                w.line(boundary, type="user", isCompactSummary=True,
                       message={"role": "user", "content": _text(rng, 300)})
                messages[0] += 1
                compacted = True
    sub = folder / SESSION / "subagents"
    sub.mkdir(parents=True, exist_ok=True)
    with (sub / "agent-b3nch0001.jsonl").open("w", encoding="utf-8") as fh:
        w = _Writer(fh, rng, SESSION, True)
        for _ in range(5):
            w.turn(messages, calls_per_reply=2)
    return path, messages[0]


def floor(folder: Path) -> dict[str, float]:
    """`json.loads` of every line of the session files (what any reader must pay)."""
    import time

    start, cpu = time.perf_counter(), time.process_time()
    lines = 0
    for file in sorted(folder.rglob("*.jsonl")):
        with file.open("rb") as fh:
            for raw in fh:
                json.loads(raw)
                lines += 1
    return {"wall": time.perf_counter() - start, "cpu": time.process_time() - cpu,
            "lines": lines}


def size_of(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*.jsonl"))
