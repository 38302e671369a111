"""One path of a tree as a Claude Code session file, so `claude --resume` continues it.

    claude_code_session(loom, at, out, cwd=None) -> session id

The path from the root to `at` (through the versions the ref selects) is written with a
new session id, in the line shapes Claude Code writes and `claude_code_lines` reads:

* a user node is one `user` line (its text as a string when it is one text block);
* an assistant node is one `assistant` line per content block, all sharing one
  `message.id` (text, thinking with its signature, tool calls);
* a tool node is one `user` line per `tool_result` block, each hanging off the line
  that carries its own call (as Claude Code writes parallel calls);
* a compaction node is a `compact_boundary` system line (`parentUuid: null`,
  `logicalParentUuid` naming the line before it) and the `isCompactSummary` user line
  holding its summary;
* a system node is a `user` line marked `isMeta` (Claude Code has no system lines).

The first line of each node has the node's id for its uuid (the ULID's 128 bits
written as a UUID, see `roundtrip`), the others a uuid derived from the session and the
node, so the file is one chain of `uuid` / `parentUuid`; importing it into this store
again, after Claude Code resumed it, continues the exported path in its tree. Every line
has a time of its own (the node's, a millisecond later for each further line), as
Claude Code writes them: readers that take equal times for replays skip none. `cwd` is
the project folder every line names (Claude Code lists a session only under its own
project), else the one the node was imported with, else `.`. Left out, because Claude Code has no place for them: the tree's system
context, a tool result's `name`, a compaction's kept turns, audio (a text stand-in).
"""

from __future__ import annotations

import base64
import json
import uuid as uuidlib
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, TextIO

from ..headish import Position
from .roundtrip import line_uuid

if TYPE_CHECKING:
    from ..loom import Loom
    from ..model import Node

VERSION = "2.0.0"


def claude_code_session(loom: Loom, at: Position, out: TextIO, cwd: str | None = None) -> str:
    """Write the path to `at` as a session file to `out`; returns the new session id."""
    session = str(uuidlib.uuid4())
    nodes = loom.nodes(loom.path(at))
    writer = _Lines(loom, session, out, cwd)
    for node in nodes:
        writer.node(node)
    return session


class _Lines:
    def __init__(self, loom: Loom, session: str, out: TextIO, cwd: str | None) -> None:
        self.loom = loom
        self.cwd = cwd
        self.clock = LineClock()
        self.session = session
        self.out = out
        self.last: str | None = None  # the newest line's uuid
        self.calls: dict[str, str] = {}  # tool_use id -> uuid of the line carrying it
        self.space = uuidlib.UUID(session)

    def _uuid(self, node: Node, part: int) -> str:
        if part == 0:
            return line_uuid(node.id)
        return str(uuidlib.uuid5(self.space, f"{node.id}/{part}"))

    def _write(self, node: Node, part: int, parent: str | None, **fields: Any) -> str:
        meta = node.provenance.get("metadata") if isinstance(node.provenance, dict) else None
        meta = meta if isinstance(meta, dict) else {}
        uid = self._uuid(node, part)
        line = {
            "parentUuid": parent, "isSidechain": False, "userType": "external",
            "cwd": self.cwd or (meta.get("cwd") if isinstance(meta.get("cwd"), str) else "."),
            "sessionId": self.session,
            "version": meta.get("version") if isinstance(meta.get("version"), str) else VERSION,
            "gitBranch": meta.get("git_branch") if isinstance(meta.get("git_branch"), str) else "",
            **fields, "uuid": uid, "timestamp": self.clock.next(node.created_at),
        }
        self.out.write(json.dumps(line, ensure_ascii=False) + "\n")
        self.last = uid
        return uid

    def node(self, node: Node) -> None:
        if node.kind == "compaction":
            self._compaction(node)
        elif node.role == "assistant":
            self._assistant(node)
        elif node.role == "tool":
            self._tool(node)
        else:
            blocks = [self._block(b) for b in node.content]
            content: Any = blocks
            if len(blocks) == 1 and blocks[0]["type"] == "text":
                content = blocks[0]["text"]
            extra = {"isMeta": True} if node.role == "system" else {}
            self._write(node, 0, self.last, type="user",
                        message={"role": "user", "content": content}, **extra)

    def _assistant(self, node: Node) -> None:
        model = (node.provenance.get("model") if isinstance(node.provenance, dict) else None)
        message_id = "msg_" + node.id.lower()
        blocks = [self._block(b) for b in node.content] or [{"type": "text", "text": ""}]
        for i, block in enumerate(blocks):
            message = {"id": message_id, "type": "message", "role": "assistant",
                       "model": model if isinstance(model, str) else node.author,
                       "content": [block], "stop_reason": None, "stop_sequence": None,
                       "usage": {"input_tokens": 0, "output_tokens": 0}}
            uid = self._write(node, i, self.last, type="assistant", message=message)
            if block["type"] == "tool_use":
                self.calls[block["id"]] = uid

    def _tool(self, node: Node) -> None:
        last = self.last
        for i, block in enumerate(node.content):
            out = self._block(block)
            if out["type"] != "tool_result":
                out = {"type": "tool_result", "tool_use_id": "unknown", "content": [out]}
            parent = self.calls.get(out["tool_use_id"], last)
            self._write(node, i, parent, type="user",
                        message={"role": "user", "content": [out]})

    def _compaction(self, node: Node) -> None:
        before = self.last
        boundary = self._write(node, 0, None, type="system", subtype="compact_boundary",
                               content="Conversation compacted", isMeta=False, level="info",
                               logicalParentUuid=before,
                               compactMetadata={"trigger": "manual", "preTokens": 0})
        text = "\n".join(b["text"] for b in node.content if b["type"] == "text")
        self._write(node, 1, boundary, type="user", isCompactSummary=True,
                    isVisibleInTranscriptOnly=True, message={"role": "user", "content": text})

    def _block(self, block: dict[str, Any]) -> dict[str, Any]:
        """A loomdb block in the Messages API shape Claude Code stores."""
        kind = block["type"]
        if kind == "text":
            return {"type": "text", "text": block["text"]}
        if kind == "thinking":
            out = {"type": "thinking", "thinking": block["thinking"]}
            if "signature" in block:
                out["signature"] = block["signature"]
            return out
        if kind == "tool_use":
            return {"type": "tool_use", "id": block.get("id") or "call", "name": block["name"],
                    "input": block["input"]}
        if kind == "tool_result":
            out = {"type": "tool_result", "tool_use_id": block.get("tool_use_id") or "unknown",
                   "content": [self._block(p) for p in block["content"]]}
            if block.get("is_error"):
                out["is_error"] = True
            return out
        if kind in ("image", "document"):
            data = base64.b64encode(self.loom.blob(block["ref"])).decode("ascii")
            return {"type": kind, "source": {"type": "base64", "media_type": block["mime_type"],
                                            "data": data}}
        return {"type": "text", "text": f"[{kind} not in a Claude Code session]"}


class LineClock:
    """A time per line: the node's own, else a millisecond after the line before it
    (the lines of one node, or a node stored with an earlier time than its parent)."""

    def __init__(self) -> None:
        self.last: datetime | None = None

    def next(self, created_at: str) -> str:
        """The next line's time, in the form the agents write (milliseconds, `Z`)."""
        moment = datetime.fromisoformat(created_at).astimezone(UTC)
        moment = moment.replace(microsecond=moment.microsecond // 1000 * 1000)
        if self.last is not None and moment <= self.last:
            moment = self.last + timedelta(milliseconds=1)
        self.last = moment
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
