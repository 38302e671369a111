"""Stored values that hold messages the tree now holds, rewritten to name their nodes.

LangGraph writes each new message twice before it is in a checkpoint: a task's pending
write (`("messages", [AIMessage(...)])`) and the graph's input (`__start__`). When the
next checkpoint has stored the message as a node, the put rewrites those values of its
parent in a shorter form, each such message replaced by a mark naming its node and
the fields it had when written (often only its id, given later by the reducer):

    {"__loomdb_node__": <node id>, "patch": {"id": None}}

so a message's text is stored once. A value is rewritten only when the short form
reads back to the very bytes the serializer wrote (checked then and there); its
digest, which the rows refer to, does not change.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage

#: the key of a mark, and the prefix of a rewritten value's serializer type
MARK = "__loomdb_node__"
PREFIX = "loomdb+"


class Refused(Exception):
    """The value holds something that would read as a mark: left as it is."""


def skeleton(value: Any, added: Sequence[tuple[str, BaseMessage]]) -> tuple[Any, int]:
    """(the value with its known messages marked, how many); `Refused` for a value
    holding a dict that looks like a mark."""
    count = 0

    def walk(v: Any) -> Any:
        nonlocal count
        if isinstance(v, BaseMessage):
            for node, m in added:
                if type(m) is type(v) and m.content == v.content:
                    patch = {k: x for k, x in v.__dict__.items() if m.__dict__.get(k, _NONE) != x}
                    count += 1
                    return {MARK: node, "patch": patch}
            return v
        if type(v) is dict:
            if MARK in v:
                raise Refused
            return {k: walk(x) for k, x in v.items()}
        if type(v) is list:
            return [walk(x) for x in v]
        if type(v) is tuple:
            return tuple(walk(x) for x in v)
        return v

    return walk(value), count


def marks(value: Any) -> set[str]:
    """The nodes a rewritten value names."""
    found: set[str] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if type(v) is dict:
            if MARK in v:
                found.add(v[MARK])
            else:
                stack.extend(v.values())
        elif type(v) in (list, tuple):
            stack.extend(v)
    return found


def inflate(value: Any, messages: dict[str, BaseMessage]) -> Any:
    """The value a rewritten one stands for."""
    if type(value) is dict:
        if MARK in value:
            node = value[MARK]
            if node not in messages:
                raise LookupError(f"a stored value names message node {node}, which is gone")
            return messages[node].model_copy(update=value["patch"])
        return {k: inflate(x, messages) for k, x in value.items()}
    if type(value) is list:
        return [inflate(x, messages) for x in value]
    if type(value) is tuple:
        return tuple(inflate(x, messages) for x in value)
    return value


class _Missing:
    pass


_NONE = _Missing()
