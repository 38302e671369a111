"""One path of a tree as a pi coding-agent session, so `pi --session FILE` continues it.

    pi_session(loom, at, out, cwd=None) -> session id

The path from the root to `at` is written as a session of pi's current layout (version 3:
a `session` header, then entries with `id` / `parentId`), with a new session id:

* a user node is a `message` entry of role `user` (text, images as base64 data);
* a system node is a `custom_message` entry (`customType` `system`), the text pi puts
  in the context;
* an assistant node is one `assistant` message: text, thinking (with its signature)
  and `toolCall` blocks, the model it was written by, `stopReason` `toolUse` when it
  calls a tool;
* a tool node is one `toolResult` message per result (pi keeps one result a message);
* a compaction node is a `compaction` entry holding its summary.

Each node's first entry has the node's id for its `id` (the further results of a tool
node `<node id>:<n>`), so a session pi continued (it appends to the same file) is
imported again as a branch of the exported path (see `roundtrip`). pi lists sessions
per project under `~/.pi/agent/sessions/--<cwd with / as ->--/`; any path works with
`pi --session`. Left out: the tree's system context (pi builds its own), a compaction's
kept turns, documents and audio (a text stand-in).
"""

from __future__ import annotations

import base64
import json
import uuid as uuidlib
from datetime import datetime
from typing import TYPE_CHECKING, Any, TextIO

from ..headish import Position
from .claude_code_export import LineClock
from .codex_export import node_meta

if TYPE_CHECKING:
    from ..loom import Loom
    from ..model import Node

VERSION = 3
_ZERO = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}


def pi_session(loom: Loom, at: Position, out: TextIO, cwd: str | None = None) -> str:
    """Write the path to `at` as a pi session to `out`; returns the new session id."""
    session = str(uuidlib.uuid4())
    nodes = loom.nodes(loom.path(at))
    clock = LineClock()
    known = node_meta(nodes[0]).get("cwd") if nodes else None
    when = clock.next(nodes[0].created_at if nodes else loom.tree(at.tree).created_at)
    _write(out, {"type": "session", "version": VERSION, "id": session, "timestamp": when,
                 "cwd": cwd or (known if isinstance(known, str) else ".")})
    parent: str | None = None
    for node in nodes:
        for i, entry in enumerate(_entries(loom, node)):
            eid = node.id if i == 0 else f"{node.id}:{i + 1}"
            stamp = clock.next(node.created_at)
            if entry.get("type") == "compaction":
                entry["firstKeptEntryId"] = eid
            if isinstance(entry.get("message"), dict):
                entry["message"]["timestamp"] = _ms(stamp)
            _write(out, {**entry, "id": eid, "parentId": parent, "timestamp": stamp})
            parent = eid
    return session


def _write(out: TextIO, value: dict[str, Any]) -> None:
    out.write(json.dumps(value, ensure_ascii=False) + "\n")


def _ms(stamp: str) -> int:
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


def _entries(loom: Loom, node: Node) -> list[dict[str, Any]]:
    if node.kind == "compaction":
        text = "\n".join(b["text"] for b in node.content if b["type"] == "text")
        return [{"type": "compaction", "summary": text, "tokensBefore": 0}]
    if node.role == "assistant":
        return [{"type": "message", "message": _assistant(loom, node)}]
    if node.role == "tool":
        results = [b for b in node.content if b["type"] == "tool_result"] or [
            {"type": "tool_result", "tool_use_id": "call", "content": node.content}]
        return [{"type": "message", "message": {
            "role": "toolResult", "toolCallId": b.get("tool_use_id") or "call",
            "toolName": b.get("name") or "tool",
            "content": [_part(loom, p) for p in b.get("content") or []],
            "isError": bool(b.get("is_error"))}} for b in results]
    content = [_part(loom, b) for b in node.content]
    if node.role == "system":
        return [{"type": "custom_message", "customType": "system", "content": content,
                 "display": True}]
    return [{"type": "message", "message": {"role": "user", "content": content}}]


def _assistant(loom: Loom, node: Node) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for block in node.content:
        if block["type"] == "thinking":
            part = {"type": "thinking", "thinking": block["thinking"]}
            if "signature" in block:
                part["thinkingSignature"] = block["signature"]
            content.append(part)
        elif block["type"] == "tool_use":
            content.append({"type": "toolCall", "id": block.get("id") or "call",
                            "name": block["name"], "arguments": block["input"]})
        else:
            content.append(_part(loom, block))
    prov = node.provenance if isinstance(node.provenance, dict) else {}
    meta = node_meta(node)
    model = prov.get("model") if isinstance(prov.get("model"), str) else node.author
    calls = any(b["type"] == "tool_use" for b in node.content)
    return {"role": "assistant", "content": content,
            "api": meta.get("api") or "openai-completions",
            "provider": meta.get("provider") or "loomdb", "model": model,
            "usage": {**_ZERO, "totalTokens": 0, "cost": {**_ZERO, "total": 0}},
            "stopReason": "toolUse" if calls else "stop"}


def _part(loom: Loom, block: dict[str, Any]) -> dict[str, Any]:
    if block["type"] == "text":
        return {"type": "text", "text": block["text"]}
    if block["type"] == "image":
        data = base64.b64encode(loom.blob(block["ref"])).decode("ascii")
        return {"type": "image", "data": data, "mimeType": block["mime_type"]}
    return {"type": "text", "text": f"[{block['type']} not in a pi session]"}
