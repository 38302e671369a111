"""Codex child threads: a subagent's rollout tied to the `spawn_agent` call that started it.

A child thread is a rollout of its own whose `session_meta.source` says
`{"subagent": {"thread_spawn": {"parent_thread_id", "depth"}}}` (or whose session meta
names `parent_thread_id` itself). In the parent's
rollout the model called `spawn_agent` (its `message` is the task) and the call's output
names the child (`{"agent_id": ...}`); a later `wait` call's output brings the child's
result back. This module orders a folder's rollouts so parents come before their
children, notes those calls while a parent is read, and gives each child the `spawn`
description the writer turns into the lineage `loomdb spawn` writes: the parent
conversation, the message holding the call, the task, and the message holding the
result. Nothing here opens a file a rollout names.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..limits import Limits
from .model import as_dict, as_str
from .stream import Input
from .values import read_values

#: the most read of a rollout's first value to learn its thread and parent
_HEAD = 4 * 1024 * 1024
_SPAWN = "spawn_agent"
_WAIT = ("wait", "wait_agent")


def parent_thread(meta: dict[str, Any]) -> str | None:
    """The parent thread a rollout's session meta names, if it is a spawned child."""
    source = as_dict(meta.get("source"))
    spawn = as_dict(as_dict(source.get("subagent")).get("thread_spawn"))
    return as_str(spawn.get("parent_thread_id")) or as_str(meta.get("parent_thread_id"))


def _head(path: Path, limits: Limits) -> tuple[str | None, str | None]:
    """(thread id, parent thread id) from a rollout's first value; (None, None) if unread."""
    for _line, value in read_values(Input(path, limits=limits), max_value=_HEAD):
        if not isinstance(value, dict):
            return None, None
        meta = as_dict(value.get("payload")) if "payload" in value else value
        return as_str(meta.get("id")), parent_thread(meta)
    return None, None


def parents_first(paths: list[Path], limits: Limits) -> list[Path]:
    """The rollouts in name order, except that a child comes after its parent."""
    heads = {p: _head(p, limits) for p in paths}
    by_thread = {tid: p for p, (tid, _parent) in heads.items() if tid}
    out: list[Path] = []
    placed: set[Path] = set()
    for path in paths:
        chain: list[Path] = []
        cursor: Path | None = path
        while cursor is not None and cursor not in placed and cursor not in chain:
            chain.append(cursor)
            parent = heads[cursor][1]
            cursor = by_thread.get(parent) if parent else None
        for p in reversed(chain):
            placed.add(p)
            out.append(p)
    return out


class Calls:
    """The `spawn_agent` and `wait` calls of one rollout, by call id, as it is read."""

    def __init__(self) -> None:
        self.calls: dict[str, tuple[str, Any, str]] = {}  # call id -> (name, args, message)
        #: child thread id -> {"message", "task", "summary"} (message source ids)
        self.children: dict[str, dict[str, Any]] = {}

    def call(self, call_id: str, name: str, arguments: Any, message: str) -> None:
        if name == _SPAWN or name in _WAIT:
            self.calls[call_id] = (name, arguments, message)

    def output(self, call_id: str, text: str, message: str) -> None:
        known = self.calls.get(call_id)
        if known is None:
            return
        name, arguments, call_message = known
        if name == _SPAWN:
            child = as_str(as_dict(_loads(text)).get("agent_id"))
            if child:
                task = as_str(as_dict(_loads(arguments)).get("message"))
                self.children[child] = {"message": call_message, "task": task, "summary": None}
        else:
            for child, spawn in self.children.items():
                if child in text:
                    spawn["summary"] = message


def _loads(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        return None
