"""One path of a tree as a Codex CLI rollout, so `codex resume` / `codex exec resume` continue it.

    codex_rollout(loom, at, out, cwd=None) -> session id

The path from the root to `at` is written as the rollouts Codex writes today (one
`{"timestamp", "type", "payload"}` value per line), with a new session id:

* the `session_meta` line first (the tree's system context as `instructions`, `cwd`);
* a user node is a user `message` item, its images `input_image` data URLs;
* a system node is a `developer` message (Codex's own role for instructions);
* an assistant node is its items in order: thinking as a `reasoning` summary, text as
  an assistant `message`, each tool call a `function_call` (its input as the JSON
  `arguments` string);
* a tool node is one `function_call_output` per result, its text as the output;
* a compaction node is a `compacted` item holding its summary.

Each user and assistant message is also written as the `event_msg` Codex replays when
it shows a resumed session (`user_message`, `agent_message`); the importer skips them.
The first item of every node carries the node's id in its `id` (`msg_<node id>`, `rs_`,
`fc_` as the Responses API prefixes its items, `item_` otherwise), so a rollout Codex
resumed (it appends to the same file) is imported again as a branch of the exported
path (see `roundtrip`). Codex finds a session by its file, so write it as
`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl` (`file_name`).
Left out, because a rollout has no place for them: a tool result's `name` and its
non-text parts (a text stand-in), documents and audio (a text stand-in).
"""

from __future__ import annotations

import base64
import json
import uuid as uuidlib
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

from ..headish import Position
from .claude_code_export import LineClock

if TYPE_CHECKING:
    from ..loom import Loom
    from ..model import Node

#: the Codex version whose rollout layout this writes (session_meta.cli_version)
CLI_VERSION = "0.58.0"
#: item id prefixes, as the Responses API names its items (`<prefix>_<node id>`)
_PREFIX = {"message": "msg", "reasoning": "rs", "function_call": "fc"}


def file_name(session: str, when: datetime | None = None) -> str:
    """`YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<session>.jsonl`, as Codex names rollouts."""
    moment = (when or datetime.now(UTC)).astimezone(UTC)
    return moment.strftime(f"%Y/%m/%d/rollout-%Y-%m-%dT%H-%M-%S-{session}.jsonl")


def codex_rollout(loom: Loom, at: Position, out: TextIO, cwd: str | None = None) -> str:
    """Write the path to `at` as a rollout to `out`; returns the new session id."""
    session = str(uuidlib.uuid4())
    nodes = loom.nodes(loom.path(at))
    tree = loom.tree(at.tree)
    clock = LineClock()
    first = clock.next(nodes[0].created_at if nodes else tree.created_at)
    meta = node_meta(nodes[0]) if nodes else {}
    where = cwd or (meta.get("cwd") if isinstance(meta.get("cwd"), str) else ".")
    _line(out, first, "session_meta", {
        "id": session, "timestamp": first, "cwd": where, "originator": "loomdb",
        "cli_version": CLI_VERSION, "instructions": tree.system or None, "source": "cli",
    })
    for node in nodes:
        for kind, payload in _items(loom, node):
            _line(out, clock.next(node.created_at), kind, payload)
    return session


def node_meta(node: Node) -> dict[str, Any]:
    """The metadata an import kept on a node (`provenance.metadata`), else {}."""
    meta = node.provenance.get("metadata") if isinstance(node.provenance, dict) else None
    return meta if isinstance(meta, dict) else {}


def _line(out: TextIO, when: str, kind: str, payload: dict[str, Any]) -> None:
    out.write(json.dumps({"timestamp": when, "type": kind, "payload": payload},
                         ensure_ascii=False) + "\n")


def _items(loom: Loom, node: Node) -> list[tuple[str, dict[str, Any]]]:
    """The (line type, payload) values of one node, the first carrying the node's id."""
    items: list[tuple[str, dict[str, Any]]] = []
    if node.kind == "compaction":
        text = "\n".join(b["text"] for b in node.content if b["type"] == "text")
        return [("compacted", {"message": text, "id": f"item_{node.id}"})]
    if node.role == "assistant":
        items = _assistant(node)
    elif node.role == "tool":
        items = [("response_item", {"type": "function_call_output",
                                    "call_id": b.get("tool_use_id") or "call",
                                    "output": _text(b.get("content") or [])})
                 for b in node.content if b["type"] == "tool_result"]
        items = items or [("response_item", {"type": "function_call_output", "call_id": "call",
                                             "output": _text(node.content)})]
    else:
        role = "developer" if node.role == "system" else "user"
        content = [_input(loom, b) for b in node.content] or [{"type": "input_text", "text": ""}]
        items = [("response_item", {"type": "message", "role": role, "content": content})]
        if role == "user":
            items.append(("event_msg", {"type": "user_message", "message": _text(node.content),
                                        "kind": "plain"}))
    first = items[0][1]
    first["id"] = f"{_PREFIX.get(str(first.get('type')), 'item')}_{node.id}"
    return items


def _assistant(node: Node) -> list[tuple[str, dict[str, Any]]]:
    items: list[tuple[str, dict[str, Any]]] = []
    for block in node.content or [{"type": "text", "text": ""}]:
        kind = block["type"]
        if kind == "thinking":
            items.append(("response_item", {
                "type": "reasoning", "summary": [{"type": "summary_text",
                                                  "text": block["thinking"]}],
                "content": None, "encrypted_content": None}))
        elif kind == "tool_use":
            items.append(("response_item", {
                "type": "function_call", "name": block["name"],
                "arguments": json.dumps(block["input"], ensure_ascii=False),
                "call_id": block.get("id") or "call"}))
        else:
            text = block["text"] if kind == "text" else f"[{kind} not in a Codex rollout]"
            items.append(("response_item", {"type": "message", "role": "assistant",
                                            "content": [{"type": "output_text", "text": text}]}))
            items.append(("event_msg", {"type": "agent_message", "message": text}))
    return items


def _input(loom: Loom, block: dict[str, Any]) -> dict[str, Any]:
    if block["type"] == "text":
        return {"type": "input_text", "text": block["text"]}
    if block["type"] == "image":
        data = base64.b64encode(loom.blob(block["ref"])).decode("ascii")
        return {"type": "input_image", "image_url": f"data:{block['mime_type']};base64,{data}"}
    return {"type": "input_text", "text": _text([block])}


def _text(blocks: list[dict[str, Any]]) -> str:
    """Blocks as the text a rollout keeps (text as is, anything else named)."""
    parts = []
    for block in blocks:
        if block["type"] == "text":
            parts.append(block["text"])
        elif block["type"] == "tool_result":
            parts.append(_text(block.get("content") or []))
        else:
            parts.append(f"[{block['type']} not in a Codex rollout]")
    return "\n".join(parts)
