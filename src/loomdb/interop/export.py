"""Trees out of a store, in six formats, written piece by piece to a text stream.

    export(loom, out, target="main" | trees=None (all), format="json")

| format | what it writes |
|---|---|
| `json` | lossless: one document `{"loomdb_export": 1, "trees": [...]}` (see `native`) |
| `jsonl` | lossless: one tree document per line (the same documents) |
| `markdown` | one path per tree, readable: the named ref/node, else the tree's first session, else its newest leaf |
| `openai-jsonl` | one line `{"messages": [...]}` per path, ready for fine-tuning: every leaf (default) or every session (`paths="sessions"`); paths without an assistant turn are left out |
| `chatgpt` | a ChatGPT `conversations.json` list: every node in `mapping` (parent/children), `current_node` from the first session; the ChatGPT importer reads it back with the same branch shape |
| `claude-code` | one path (the named one, else the tree's first session) as a Claude Code session file with a new session id, for `claude --resume` (see `claude_code_export`) |
| `codex` | the same path as a Codex CLI rollout, for `codex resume` (see `codex_export`) |
| `pi` | the same path as a pi session, for `pi --session` (see `pi_export`) |

The three agent formats name every node they write in the ids of their lines, so the
session the agent continued is imported again as a branch of the exported path
(`roundtrip`); `cwd` sets the project folder the session names.

Only `json`/`jsonl` keep everything; the others render content for other tools (media
and tool blocks become text surrogates in `markdown` and `chatgpt`).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..errors import InvalidInput, NotFound
from ..headish import Position
from ..model import Node, Tree
from ..storage_ops import storage
from . import native

if TYPE_CHECKING:
    from ..loom import Loom

EXPORT_FORMATS = ("json", "jsonl", "markdown", "openai-jsonl", "chatgpt", "claude-code", "codex",
                  "pi")
AGENT_FORMATS = ("claude-code", "codex", "pi")
PATHS = ("leaves", "sessions")
_CHATGPT_ROOT = "loomdb-root"


def export(
    loom: Loom,
    out: TextIO,
    *,
    target: str | None = None,
    format: str = "json",
    paths: str = "leaves",
    cwd: str | None = None,
) -> int:
    """Write one tree (`target`: a tree id/prefix, or any headish inside it) or, with
    `target=None`, every tree (archived ones too). Returns how many trees were written."""
    fmt = format.strip().lower().replace("_", "-")
    if fmt not in EXPORT_FORMATS:
        raise InvalidInput("--format", f"unknown export format {format!r}; use {', '.join(EXPORT_FORMATS)}")
    if paths not in PATHS:
        raise InvalidInput("--paths", f"{paths!r} is not one of {', '.join(PATHS)}")
    if cwd is not None and fmt not in AGENT_FORMATS:
        raise InvalidInput("--cwd", f"only {', '.join(AGENT_FORMATS)} sessions name a folder")
    if fmt in AGENT_FORMATS:
        if target is None:
            raise InvalidInput("--format", f"{fmt} writes one path: name a HEADISH, not --all")
        tid, named = locate(loom, target)
        agent_session(loom, fmt, named or default_position(loom, tid), out, cwd)
        return 1
    if target is None:
        trees = [t.id for t in loom.trees()] + [t.id for t in loom.trees(archived=True)]
        trees.sort()
        at: Position | None = None
    else:
        tid, at = locate(loom, target)
        trees = [tid]
    if fmt == "json":
        native.write_json(loom, trees, out)
    elif fmt == "jsonl":
        native.write_jsonl(loom, trees, out)
    elif fmt == "markdown":
        for i, tid in enumerate(trees):
            out.write("\n---\n\n" if i else "")
            out.write(markdown(loom, tid, at))
    elif fmt == "openai-jsonl":
        for tid in trees:
            for line in openai_lines(loom, tid, at, paths):
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
    else:
        out.write("[")
        for i, tid in enumerate(trees):
            out.write(",\n" if i else "\n")
            out.write(json.dumps(chatgpt_conversation(loom, tid, at), ensure_ascii=False))
        out.write("\n]\n")
    return len(trees)


def export_file(
    loom: Loom,
    path: str | os.PathLike[str],
    *,
    target: str | None = None,
    format: str = "json",
    paths: str = "leaves",
    cwd: str | None = None,
) -> int:
    """`export` into a file, written beside it and renamed into place: a failed export
    leaves no partial file (and an existing one untouched)."""
    output = Path(path).expanduser()
    if not output.parent.is_dir():
        raise InvalidInput(str(output), "its folder does not exist")
    fd, tmp = tempfile.mkstemp(dir=output.parent if str(output.parent) else ".",
                               prefix=f".{output.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            count = export(loom, fh, target=target, format=format, paths=paths, cwd=cwd)
        os.replace(tmp, output)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return count


def agent_session(loom: Loom, fmt: str, at: Position, out: TextIO, cwd: str | None) -> str:
    """The path to `at` as a coding agent's session file; returns its new session id."""
    from .claude_code_export import claude_code_session
    from .codex_export import codex_rollout
    from .pi_export import pi_session

    write = {"claude-code": claude_code_session, "codex": codex_rollout, "pi": pi_session}[fmt]
    return write(loom, at, out, cwd)


def locate(loom: Loom, name: str) -> tuple[str, Position | None]:
    """(tree id, the position named, if `name` names a node or ref rather than a tree)."""
    tree = storage(loom).tree_by_id(name)
    if tree is not None:
        return tree.id, None
    try:
        pos = loom.resolve(name)
    except NotFound:
        return loom.tree(name).id, None
    return pos.tree, pos


# ---------------------------------------------------------------- choosing paths


def first_session(loom: Loom, tree_id: str) -> str | None:
    sessions = sorted(loom.refs("session", tree_id), key=lambda r: (r.created_at, r.name))
    return sessions[0].name if sessions else None


def default_position(loom: Loom, tree_id: str) -> Position:
    """The tree's first session (by creation), else its newest leaf."""
    name = first_session(loom, tree_id)
    if name is not None:
        return loom.resolve(name)
    leaves = loom.leaves(tree_id) or loom.leaves(tree_id, include_pruned=True)
    return loom.resolve(leaves[-1])


def _positions(loom: Loom, tree_id: str, at: Position | None, paths: str) -> Iterator[Position]:
    if at is not None:
        yield at
    elif paths == "sessions":
        for ref in sorted(loom.refs("session", tree_id), key=lambda r: (r.created_at, r.name)):
            yield loom.resolve(ref.name)
    else:
        for leaf in loom.leaves(tree_id):
            yield loom.resolve(leaf)


# ---------------------------------------------------------------- markdown


def markdown(loom: Loom, tree_id: str, at: Position | None = None) -> str:
    """One path of a tree as Markdown: a header, then each message with who and when."""
    tree = loom.tree(tree_id)
    pos = at or default_position(loom, tree_id)
    ids = loom.path(pos)
    nodes = loom.nodes(ids)
    meta = storage(loom).metas(ids)
    via = f"`{pos.ref.name}`" if pos.ref is not None else f"node `{pos.node}`"
    lines = [f"# {tree.title}", "",
             f"- tree `{tree.id}` ({tree.mode}), created {tree.created_at}",
             f"- path: {via}, {len(nodes)} message(s)"]
    if tree.system:
        lines += ["", "**system context**", "", _quote(tree.system)]
    if tree.mode == "buffer":
        lines += ["", "---", "", "".join(_plain(n.content) for n in nodes)]
        return "\n".join(lines) + "\n"
    for node in nodes:
        flags = []
        m = meta.get(node.id)
        if m is not None:
            flags += ["excluded from context"] if m.excluded else []
            flags += [f"#{t}" for t in m.tags]
            flags += [f"bookmark `{m.label}`"] if m.bookmarked and m.label else []
        head = f"### {node.role} · {node.author} · {node.created_at}"
        if flags:
            head += " · " + ", ".join(flags)
        lines += ["", head, f"<!-- node {node.id} -->", "", render_blocks(node.content)]
    return "\n".join(lines) + "\n"


def _quote(text: str) -> str:
    return "\n".join("> " + line for line in text.splitlines()) or ">"


def _plain(blocks: list[dict[str, Any]]) -> str:
    return "".join(b["text"] for b in blocks if b["type"] == "text")


def render_blocks(blocks: list[dict[str, Any]]) -> str:
    """Content as readable text: text as is, everything else as a short surrogate."""
    parts = [_render(b) for b in blocks]
    return "\n\n".join(p for p in parts if p)


def _render(block: dict[str, Any]) -> str:
    kind = block["type"]
    if kind == "text":
        return str(block["text"])
    if kind == "thinking":
        return f"<details><summary>thinking</summary>\n\n{block['thinking']}\n\n</details>"
    if kind == "image":
        label = block.get("alt_text") or block["mime_type"]
        return f"*[image: {label}]* `{block['ref']}`"
    if kind == "audio":
        said = f": {block['transcript']}" if block.get("transcript") else ""
        return f"*[audio{said}]* `{block['ref']}`"
    if kind == "document":
        name = block.get("name") or block["mime_type"]
        text = f"\n\n{block['text']}" if block.get("text") else ""
        return f"*[document: {name}]* `{block['ref']}`{text}"
    if kind == "tool_use":
        body = json.dumps(block["input"], ensure_ascii=False, indent=2)
        return f"**tool call** `{block['name']}` ({block.get('id', '')})\n\n```json\n{body}\n```"
    if kind == "tool_result":
        error = " (error)" if block.get("is_error") else ""
        inner = render_blocks(block["content"]) or "(empty)"
        label = block.get("tool_use_id") or block.get("name")
        return f"**tool result** for `{label}`{error}\n\n{inner}"
    return json.dumps(block, ensure_ascii=False)


# ---------------------------------------------------------------- openai-jsonl


def openai_lines(
    loom: Loom, tree_id: str, at: Position | None = None, paths: str = "leaves"
) -> Iterator[dict[str, Any]]:
    """`{"messages": [...]}` (plus `tools` when the path's options set them) per path."""
    from ..providers.requests import openai_messages, openai_tools

    for pos in _positions(loom, tree_id, at, paths):
        ctx = loom.context(pos)
        messages: list[dict[str, Any]] = []
        for i, message in enumerate(ctx["messages"]):
            messages += openai_messages(message, loom.blob, f"{pos.node} messages[{i}]")
        if not any(m["role"] == "assistant" for m in messages):
            continue
        line: dict[str, Any] = {"messages": messages}
        tools = openai_tools(ctx["options"]).get("tools")
        if tools:
            line["tools"] = tools
        yield line


# ---------------------------------------------------------------- chatgpt


def _epoch(value: str | None) -> float | None:
    if not value:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def chatgpt_conversation(loom: Loom, tree_id: str, at: Position | None = None) -> dict[str, Any]:
    """A tree as one ChatGPT export conversation (a `mapping` of every node)."""
    tree = loom.tree(tree_id)
    nodes = list(storage(loom).all_nodes(tree.id))
    hidden = {nid for nid, m in _metas(loom, [n.id for n in nodes]) if "hidden" in m.tags}
    children: dict[str, list[str]] = {_CHATGPT_ROOT: []}
    for node in nodes:
        children.setdefault(node.parent or _CHATGPT_ROOT, []).append(node.id)
    mapping: dict[str, Any] = {
        _CHATGPT_ROOT: {"id": _CHATGPT_ROOT, "message": None, "parent": None,
                        "children": children[_CHATGPT_ROOT]},
    }
    for node in nodes:
        mapping[node.id] = {
            "id": node.id, "message": _chatgpt_message(node, node.id in hidden),
            "parent": node.parent or _CHATGPT_ROOT, "children": children.get(node.id, []),
        }
    current = (at or default_position(loom, tree.id)).node if nodes else None
    return _chatgpt_envelope(tree, mapping, current)


def _metas(loom: Loom, ids: list[str]) -> Iterable[tuple[str, Any]]:
    for i in range(0, len(ids), 500):
        yield from storage(loom).metas(ids[i : i + 500]).items()


def _chatgpt_message(node: Node, hidden: bool) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    model = (node.provenance or {}).get("model")
    if isinstance(model, str):
        metadata["model_slug"] = model
    if hidden:
        metadata["is_visually_hidden_from_conversation"] = True
    return {
        "id": node.id,
        "author": {"role": node.role, "name": None, "metadata": {}},
        "create_time": _epoch(node.created_at),
        "update_time": None,
        "content": {"content_type": "text", "parts": [render_blocks(node.content)]},
        "status": "finished_successfully",
        "end_turn": None,
        "weight": 1.0,
        "metadata": metadata,
        "recipient": "all",
    }


def _chatgpt_envelope(tree: Tree, mapping: dict[str, Any], current: str | None) -> dict[str, Any]:
    return {
        "title": tree.title,
        "create_time": _epoch(tree.created_at),
        "update_time": _epoch(tree.updated_at),
        "mapping": mapping,
        "moderation_results": [],
        "current_node": current,
        "conversation_id": tree.id,
        "id": tree.id,
        "is_archived": tree.archived_at is not None,
        "default_model_slug": None,
    }
