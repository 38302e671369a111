"""Claude Code session lines for tests: an independent count of what a real file holds,
and a builder that writes session files of the shapes Claude Code writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "agent-sessions" / "claude-code"


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(raw) for raw in path.read_text("utf-8").splitlines() if raw.strip()]


def count(path: Path, *, sidechain: bool | None = False) -> dict[str, int]:
    """What a session file holds, counted straight from its lines (not through the
    importer's folding): replies (distinct `message.id`), user turns (lines with a block
    that is not a tool result), tool nodes (replies some tool result answers), tool
    calls (tool_use blocks), subagent runs inline (sidechain roots)."""
    rows = [r for r in lines_of(path)
            if sidechain is None or bool(r.get("isSidechain")) == sidechain]
    replies: set[str] = set()
    owner: dict[str, str] = {}
    answered: set[str] = set()
    users = calls = 0
    for r in rows:
        msg = r.get("message") if r.get("type") in ("user", "assistant") else None
        if not isinstance(msg, dict):
            continue
        content = msg.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text"}]
        if r["type"] == "assistant":
            replies.add(msg["id"])
            for b in blocks:
                if b.get("type") == "tool_use":
                    calls += 1
                    owner[b["id"]] = msg["id"]
        elif all(b.get("type") == "tool_result" for b in blocks) and blocks:
            answered.update(b["tool_use_id"] for b in blocks)
        elif not r.get("isCompactSummary"):
            users += 1
    tools = {owner[c] for c in answered if c in owner}
    roots = sum(1 for r in rows if r.get("type") in ("user", "assistant")
                and r.get("parentUuid") is None)
    return {"nodes": len(replies) + users + len(tools), "replies": len(replies),
            "users": users, "tools": len(tools), "calls": calls, "roots": roots}


_TRANSPARENT = ("attachment", "progress", "system")


def forks(path: Path, *, sidechain: bool | None = False) -> int:
    """Real branch points, counted on the lines: a line from which two or more turns
    start (a user line that is not only tool results, or a reply other than the line's
    own), looking through lines that are no message."""
    rows = [r for r in lines_of(path) if r.get("uuid")
            and (sidechain is None or bool(r.get("isSidechain")) == sidechain)]
    kids: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r.get("parentUuid"):
            kids.setdefault(r["parentUuid"], []).append(r)

    def starts(parent: dict[str, Any], child: dict[str, Any]) -> list[str]:
        if child.get("type") in _TRANSPARENT and child.get("subtype") != "compact_boundary":
            return [u for k in kids.get(child["uuid"], []) for u in starts(parent, k)]
        msg = child.get("message") or {}
        if child.get("type") == "assistant":
            same = (parent.get("message") or {}).get("id") == msg.get("id")
            return [] if same else [child["uuid"]]
        content = msg.get("content")
        if isinstance(content, list) and content and all(
                b.get("type") == "tool_result" for b in content):
            return []
        return [child["uuid"]]

    return sum(1 for r in rows
               if len({u for k in kids.get(r["uuid"], []) for u in starts(r, k)}) >= 2)


class SessionWriter:
    """Writes a session file line by line, as Claude Code does (uuids u1, u2, ...)."""

    def __init__(self, path: Path, session: str) -> None:
        self.path = path
        self.session = session
        self.n = 0
        self.lines: list[dict[str, Any]] = []
        path.parent.mkdir(parents=True, exist_ok=True)

    def _line(self, parent: str | None, **fields: Any) -> str:
        self.n += 1
        uuid = fields.pop("uuid", f"{self.session[:4]}-u{self.n}")
        line = {"parentUuid": parent, "isSidechain": False, "userType": "external",
                "cwd": "/home/dev/project", "sessionId": self.session, "version": "2.1.3",
                "gitBranch": "main", "uuid": uuid,
                "timestamp": f"2026-01-02T10:{self.n // 60:02d}:{self.n % 60:02d}.000Z", **fields}
        self.write(line)
        return uuid

    def write(self, line: dict[str, Any], *, newline: bool = True) -> None:
        self.lines.append(line)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + ("\n" if newline else ""))

    def user(self, parent: str | None, text: str, **extra: Any) -> str:
        return self._line(parent, type="user", message={"role": "user", "content": text}, **extra)

    def reply(self, parent: str | None, mid: str, block: dict[str, Any], **extra: Any) -> str:
        msg = {"id": mid, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
               "content": [block], "stop_reason": None}
        return self._line(parent, type="assistant", message=msg, **extra)

    def result(self, parent: str, call: str, text: str, **extra: Any) -> str:
        block = {"type": "tool_result", "tool_use_id": call, "content": text}
        return self._line(parent, type="user",
                          message={"role": "user", "content": [block]}, **extra)

    def other(self, parent: str | None, kind: str, **extra: Any) -> str:
        return self._line(parent, type=kind, **extra)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def call(call_id: str, name: str = "Bash", **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": args or {"command": "ls"}}
