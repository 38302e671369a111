"""Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) into the intermediate form.

One rollout file is one session, one tree. Current rollouts wrap every value as
`{"timestamp", "type", "payload"}` with types `session_meta`, `response_item`,
`event_msg`, `turn_context` and `compacted`; older ones hold the session meta as the
first value and the response items bare after it (with `record_type` state values in
between). A file may hold pretty-printed values spanning lines, so values are read,
not lines (`values.read_values`).

No entry has an id, so file order is the order and a message's source id is the
index of the value that starts it: importing a file that grew adds only its new
messages. The messages form one chain:

  * `response_item` `message`s are user / assistant / system nodes (`developer` is a
    system node that keeps its source role);
  * the assistant's items of one turn (reasoning summaries as thinking, messages,
    function and custom tool calls as `tool_use`) form one assistant node; the
    outputs that follow them (`function_call_output`...) one tool node of
    `tool_result`s;
  * `event_msg` values repeat the response items for the UI (user_message,
    agent_message, agent_reasoning) or carry usage (token_count): not messages;
  * `turn_context` (model, effort, cwd, sandbox and approval policy) becomes the
    options of the next node written, under `codex`, when it differs from the ones in
    force: inert settings, never a provider pointer;
  * a `compacted` item becomes a compaction node holding its summary;
  * `ghost_snapshot` (a git snapshot of the worktree) is left out, named in the
    conversation's metadata count; a response item of a kind not read here is counted
    there too and named in a warning (nothing the model saw goes in silence).

An item whose `id` is `<prefix>_<node id>` (as `export --format codex` writes a node's
first item) names the stored node it came from (see `roundtrip`).

A folder is read as every `rollout-*.jsonl` below it (symbolic links not followed,
nothing outside it read), each file one conversation. A child thread (a subagent the
model started with `spawn_agent`) is its own rollout; it is read after its parent and
becomes a child tree spawned from the call (see `codex_threads`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from .codex_threads import Calls, parent_thread, parents_first
from .model import (
    AttachmentSet,
    ImportedConversation,
    ImportedMessage,
    ParseError,
    as_dict,
    as_str,
    check_blocks,
    content_hash,
    guarded,
    parse_data_url,
    text_block,
    to_datetime,
    tool_result_block,
    tool_use_block,
)
from .roundtrip import node_id
from .stream import Input, as_input
from .titles import first_sentence
from .values import read_values

FORMAT = "codex"
_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}
_CALLS = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output")
#: turn_context keys kept as options (the rest are long instructions or unknown)
_CONTEXT_KEYS = ("model", "effort", "summary", "cwd", "approval_policy", "sandbox_policy")
#: the keys of the older layout's bare session meta line
_LEGACY_META = {"id", "timestamp", "instructions", "git", "cwd", "originator", "cli_version"}
#: the most rollout files read from one folder
MAX_FILES = 100_000

Blocks = list[dict[str, Any]]


def parse(
    source: str | os.PathLike[str] | Input, *, part_chars: int | None = None,
) -> Iterator[ImportedConversation | ParseError]:
    """Every rollout of a file or folder, one conversation each. `part_chars`: a
    rollout whose messages hold more text than this comes in parts
    (`ImportedConversation.more`), each given as soon as it is read, so a long session
    is never held whole (the import writes the parts in one transaction)."""
    inp = as_input(source)
    #: child thread id -> its spawn, noted while its parent was read (parents come first)
    spawned: dict[str, dict[str, Any]] = {}
    for path in parents_first(list(session_files(inp.path, "rollout-*.jsonl")), inp.limits):
        one = inp if path == inp.path else Input(path, limits=inp.limits)  # (its reads counted)
        label = str(path.relative_to(inp.path)) if inp.path.is_dir() else inp.name
        rollout = _Rollout(label, part_chars, spawned)
        if part_chars is None:
            item = guarded(label, rollout.run, read_values(one))  # folded as it is read
            rollout.spawn(item)
            yield item
        else:
            yield from _guarded_parts(label, rollout, read_values(one))
        if rollout.done is not None:
            for child, spawn in rollout.calls.children.items():
                spawned[child] = {"conversation": rollout.done, **spawn}


def _guarded_parts(
    label: str, rollout: _Rollout, values: Iterable[tuple[int, Any]]
) -> Iterator[ImportedConversation | ParseError]:
    """The parts of one rollout; a problem met on the way ends it as its ParseError
    (the parts before it are then written by no one: the import rolls them back)."""
    try:
        for part in rollout.parts(values):
            rollout.spawn(part)
            yield part
    except InvalidInput as exc:
        rollout.done = None
        yield ParseError(label, str(exc))
    except (TypeError, AttributeError, KeyError, ValueError) as exc:
        rollout.done = None
        yield ParseError(label, f"unexpected structure ({type(exc).__name__}: {exc})")


def session_files(root: Path, pattern: str) -> Iterator[Path]:
    """`root` itself when it is a file, else the files under it matching `pattern`, in
    name order: regular files only, no symbolic link followed, nothing outside `root`."""
    if not root.is_dir():
        yield root
        return
    base = root.resolve()
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not (Path(dirpath) / d).is_symlink())
        for name in filenames:
            path = Path(dirpath) / name
            if path.match(pattern) and path.is_file() and not path.is_symlink():
                found.append(path)
                if len(found) > MAX_FILES:
                    raise InvalidInput(str(root), f"more than {MAX_FILES} session files")
    yield from (root / p.relative_to(base) for p in sorted(found))


def looks_like(value: Any) -> bool:
    """Is this the first value of a Codex rollout?"""
    if not isinstance(value, dict):
        return False
    if value.get("type") == "session_meta" and isinstance(value.get("payload"), dict):
        return True
    payload = value.get("payload")
    if isinstance(payload, dict) and value.get("type") in ("response_item", "turn_context"):
        return True
    # the older layout (2025, before the envelopes): the session meta bare on the first
    # line, `{"id", "timestamp"}` with at most `instructions` and `git` beside them
    return (isinstance(value.get("id"), str) and isinstance(value.get("timestamp"), str)
            and "type" not in value and set(value) <= _LEGACY_META)


class _Rollout:
    """One rollout file, value by value, into one chain of messages."""

    def __init__(self, label: str, part_chars: int | None = None,
                 spawned: dict[str, dict[str, Any]] | None = None) -> None:
        self.label = label
        self.part_chars = part_chars
        self.held = 0  # characters of text the messages not yet given out hold
        self.spawned = spawned if spawned is not None else {}
        #: the source id of the conversation once read whole (its children follow)
        self.done: str | None = None
        self.titled = False  # the first part holds the title (see `_titled`)
        self.meta: dict[str, Any] = {}
        self.messages: list[ImportedMessage] = []
        self.attachments = AttachmentSet()
        self.options: dict[str, Any] = {}
        self.pending: dict[str, Any] | None = None
        self.group: tuple[str, int] | None = None  # (kind, index of the node's message)
        self.left_out: dict[str, int] = {}
        self.warnings: list[str] = []
        self.when: Any = None
        self.calls = Calls()

    def run(self, values: Iterable[tuple[int, Any]]) -> ImportedConversation:
        """The rollout's values, each folded as it is read and then dropped (memory
        follows the messages, not the file)."""
        *_, whole = self.parts(values)
        return whole

    def parts(self, values: Iterable[tuple[int, Any]]) -> Iterator[ImportedConversation]:
        """The conversation, in parts when `part_chars` is set and its messages hold
        more text than that (every closed message given out; the open one kept), else
        whole: the last item given is the end."""
        first: list[Any] = []  # the first three values: the id of a rollout without one
        for index, (line, value) in enumerate(values):
            where = f"line {line}"
            if isinstance(value, InvalidInput):
                raise InvalidInput(f"{self.label} {where}", value.why)
            if not isinstance(value, dict):
                raise InvalidInput(f"{self.label} {where}", "expected a JSON object")
            if index < 3 and not self.meta.get("id"):
                first.append(value)
            self._value(index, value, where)
            if (self.part_chars is not None and self.held > self.part_chars and index >= 3
                    and len(self.messages) > 1 and self._titled()
                    and not any(m.same_as for m in self.messages)):
                yield self._conversation(first, self.messages[:-1], more=True)
        whole = self._conversation(first, self.messages)
        self.done = whole.source_id
        yield whole

    def _titled(self) -> bool:
        """May the first part go (the tree's title, the first sentence a person wrote,
        comes from it)? Yes once a closed message holds that sentence, or once the
        messages held are four parts' worth, and 1 MB at least (the title then comes
        from the first message)."""
        if not self.titled:
            assert self.part_chars is not None
            self.titled = (first_sentence(self.messages[:-1]) is not None
                           or self.held > max(4 * self.part_chars, 1 << 20))
        return self.titled

    def _conversation(self, first: list[Any], messages: list[ImportedMessage], *,
                      more: bool = False) -> ImportedConversation:
        """The messages read so far as a conversation (`more`: a part; those messages
        are then let go, and the text held counts from the open one)."""
        meta = self.meta
        source_id = as_str(meta.get("id")) or content_hash(first[:3])
        metadata: dict[str, Any] = {k: meta[k] for k in ("cwd", "originator", "cli_version", "source",
                                         "model_provider", "git") if k in meta}
        if self.left_out:
            metadata["left_out"] = dict(self.left_out)
        current = messages[-1].source_id if messages else None
        conv = ImportedConversation(
            source_format=FORMAT, source_id=source_id, title=None,
            created_at=to_datetime(meta.get("timestamp"), "session_meta.timestamp"),
            mode="dialogue", messages=messages, current_source_id=current,
            attachments=self.attachments.to_list(), system=as_str(meta.get("instructions")),
            metadata=metadata, warnings=[] if more else self.warnings, more=more,
        )
        if more:
            kept = len(messages)
            self.messages = self.messages[kept:]
            if self.group is not None:
                self.group = (self.group[0], self.group[1] - kept)
            self.attachments = AttachmentSet()
            self.held = sum(_weight(m.content) for m in self.messages)
        return conv

    def spawn(self, item: ImportedConversation | ParseError) -> None:
        """A child thread's conversation names the call that spawned it."""
        if isinstance(item, ImportedConversation):
            parent = parent_thread(self.meta)
            if parent is not None:
                item.spawn = self.spawned.get(item.source_id) or {"conversation": parent}

    def _value(self, index: int, value: dict[str, Any], where: str) -> None:
        if "payload" in value and isinstance(value.get("type"), str):
            kind, payload = value["type"], as_dict(value.get("payload"))
            self.when = value.get("timestamp") or self.when
        elif index == 0 and "type" not in value:
            kind, payload = "session_meta", value
        elif "record_type" in value and "type" not in value:  # the older layout's state marks
            return
        else:
            kind, payload = "response_item", value
        mark = node_id(str(payload.get("id")).rpartition("_")[2])  # exported here: `roundtrip`
        count = len(self.messages)
        self._kind(index, kind, payload, where)
        if mark and len(self.messages) > count:
            self.messages[-1].same_as = mark

    def _kind(self, index: int, kind: str, payload: dict[str, Any], where: str) -> None:
        if kind == "session_meta":
            if not self.meta:
                self.meta = payload
                self.when = self.when or payload.get("timestamp")
        elif kind == "turn_context":
            wanted = {k: payload[k] for k in _CONTEXT_KEYS if k in payload}
            if wanted != self.options:
                self.pending = wanted
        elif kind == "compacted":
            self._compaction(index, payload, where)
        elif kind == "response_item":
            self._item(index, payload, where)
        elif kind != "event_msg":
            self.left_out[kind] = self.left_out.get(kind, 0) + 1

    def _item(self, index: int, item: dict[str, Any], where: str) -> None:
        kind = item.get("type")
        if kind == "message":
            role = as_str(item.get("role")) or ""
            if role not in _ROLES:
                raise InvalidInput(f"{self.label} {where}.role", f"unknown role {role!r}")
            blocks = self._content(item.get("content"), f"{where}.content")
            if role == "assistant":
                self._add_to("assistant", index, blocks, where)
            else:
                meta = {"source_role": role} if role == "developer" else {}
                self._new(index, _ROLES[role], blocks, where, meta)
        elif kind == "reasoning":  # the summary, else the raw text some models return
            parts = item.get("summary") or item.get("content") or []
            texts = [as_str(as_dict(s).get("text")) for s in parts if isinstance(s, dict)]
            thinking = "\n\n".join(t for t in texts if t)
            if thinking:
                self._add_to("assistant", index, [{"type": "thinking", "thinking": thinking}],
                             where)
        elif kind in _CALLS:
            block = self._call(item, index)
            self._add_to("assistant", index, [block], where)
            self.calls.call(block["id"], block["name"], item.get("arguments"),
                            self.messages[-1].source_id)
        elif kind in _OUTPUTS:
            call_id = as_str(item.get("call_id")) or f"call-{index}"
            text = _output(item.get("output"))
            self._add_to("tool", index, [tool_result_block(call_id, text)], where)
            self.calls.output(call_id, text, self.messages[-1].source_id)
        else:
            name = str(kind)[:40]
            self.left_out[name] = self.left_out.get(name, 0) + 1
            if name != "ghost_snapshot":  # a git snapshot of the worktree: never history
                self.warnings.append(f"{self.label} {where}: a {name!r} item, which no node "
                                     f"holds; left out")

    def _compaction(self, index: int, payload: dict[str, Any], where: str) -> None:
        summary = as_str(payload.get("message")) or ""
        self._new(index, "user", [text_block(summary)], where, {}, kind="compaction")
        history = payload.get("replacement_history")
        if isinstance(history, list):
            self.messages[-1].metadata["replacement_history"] = len(history)

    def _call(self, item: dict[str, Any], index: int) -> dict[str, Any]:
        call_id = as_str(item.get("call_id")) or as_str(item.get("id")) or f"call-{index}"
        name = as_str(item.get("name")) or str(item.get("type"))
        if item.get("type") == "function_call":
            return tool_use_block(call_id, name, item.get("arguments"))
        if item.get("type") == "custom_tool_call":
            return tool_use_block(call_id, name, {"input": item.get("input")})
        rest = {k: v for k, v in item.items() if k not in ("type", "id", "call_id")}
        return tool_use_block(call_id, name, rest)

    def _content(self, raw: Any, where: str) -> Blocks:
        if isinstance(raw, str):
            return [text_block(raw)] if raw else []
        blocks: Blocks = []
        for i, part in enumerate(raw if isinstance(raw, list) else []):
            part = as_dict(part)
            kind = part.get("type")
            if kind in ("input_text", "output_text", "text") and isinstance(part.get("text"), str):
                blocks.append(text_block(part["text"]))
            elif kind == "input_image":
                blocks.append(self._image(as_str(part.get("image_url")) or "", f"{where}[{i}]"))
        return blocks

    def _image(self, url: str, where: str) -> dict[str, Any]:
        parsed = parse_data_url(url)
        if parsed is None:  # a remote or local path: named, never fetched or read
            return text_block(f"[image not in the session: {url[:200]}]")
        mime, data = parsed
        key = self.attachments.add(f"{where}:{content_hash(url)[7:23]}", data,
                                   mime or "application/octet-stream")
        return {"type": "image", "ref": key, "mime_type": mime or "application/octet-stream"}

    # -- building the chain --------------------------------------------------------------
    def _add_to(self, kind: str, index: int, blocks: Blocks, where: str) -> None:
        """Blocks into the open node of `kind` (an assistant turn, its tool outputs), or
        a new node when the open one is of another kind."""
        self.held += _weight(blocks)
        if self.group is not None and self.group[0] == kind:
            message = self.messages[self.group[1]]
            message.content = check_blocks(
                [b for b in message.content if b.get("text") != ""] + blocks, where)
            return
        self.held -= _weight(blocks)  # (counted by `_new`)
        self._new(index, kind, blocks, where, {})
        self.group = (kind, len(self.messages) - 1)

    def _new(self, index: int, role: str, blocks: Blocks, where: str, meta: dict[str, Any],
             kind: str = "message") -> None:
        self.held += _weight(blocks)
        parent = self.messages[-1].source_id if self.messages else None
        model = self.options.get("model") if role == "assistant" else None
        message = ImportedMessage(
            source_id=str(index), parent_source_id=parent, role=role,
            content=check_blocks(blocks, f"{self.label} {where}"),
            created_at=to_datetime(self.when, f"{self.label} {where}.timestamp"),
            model=model if isinstance(model, str) and model else None,
            metadata=meta, kind=kind,
        )
        if self.pending is not None:
            message.options = {"codex": self.pending}
            self.options = self.pending
            self.pending = None
            if role == "assistant" and isinstance(self.options.get("model"), str):
                message.model = self.options["model"] or None
        self.messages.append(message)
        self.group = None


def _weight(value: Any, depth: int = 0) -> int:
    """About how much text a value holds: the lengths of its strings, three levels
    down (a tool result's text blocks), without copying any."""
    if isinstance(value, str):
        return len(value)
    if depth > 3:
        return 0
    if isinstance(value, dict):
        return sum(_weight(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return sum(_weight(v, depth + 1) for v in value)
    return 0


def _output(raw: Any) -> str:
    """A function call's output: Codex writes a JSON string `{"output", "metadata"}` or
    plain text; the text is kept as it was written."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, dict) and isinstance(raw.get("content"), str):
        return str(raw["content"])
    return "" if raw is None else str(raw)[:1_000_000]
