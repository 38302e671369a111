"""What detection reads of a file before its format is known: the `Head` each format's
`sniff` judges (see `formats`).

A Head is lazy and bounded: the first 64 KB (`raw`), the first JSON value that is a
record some format may know (`record`: leading records of a type no format knows, such
as the `queue-operation` lines Claude Code 2.1 writes before the first message, are
passed over), or, for one big object or an array, a stand-in built from a streamed
read of its keys (nothing of the content is built: any input may come here).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cached_property
from typing import Any

from ..errors import InvalidInput
from ..jsondepth import TooDeep
from .events import walk
from .stream import Input, first_char, json_stream, loads
from .values import read_values

#: the most read of one leading value (an agent session's first value may be large)
SESSION_HEAD = 4 * 1024 * 1024
#: the most leading records of unknown types passed over before giving up
MAX_SKIPPED = 16


class Head:
    """The start of one document, as the formats' `sniff`s read it."""

    def __init__(self, inp: Input, decisive: Iterable[str] = (),
                 knows: Callable[[Any], bool] = lambda _record: True) -> None:
        self.inp = inp
        self.raw = inp.peek()
        self.kind = first_char(self.raw)
        self.decisive = frozenset(decisive)
        self._knows = knows
        self.skipped = 0  # leading records passed over (types no format knows)

    @cached_property
    def jsonl(self) -> bool:
        """One JSON object per line (by name, or a second line that starts an object)."""
        if (self.inp.member or self.inp.path.name).endswith(".jsonl"):
            return True
        lines = [line for line in self.raw.split(b"\n") if line.strip()]
        if len(lines) < 2 or not lines[1].lstrip().startswith(b"{"):
            return False
        try:
            return isinstance(loads(lines[0], self.inp.limits), dict)
        except ValueError:
            return False

    @cached_property
    def value(self) -> Any:
        """The first value some format may know (None: none within the bounds). Leading
        records of a type no format knows are passed over (at most `MAX_SKIPPED`)."""
        if self.kind != "{":
            return None
        for _line, value in read_values(self.inp, max_value=SESSION_HEAD):
            if isinstance(value, InvalidInput):
                if self.jsonl and "nested deeper" in value.why:
                    raise TooDeep(value.where, value.why)  # a line no format may take
                return None  # one big value (a deep save, an export): its keys are read
            if (isinstance(value, dict) and isinstance(value.get("type"), str)
                    and not self._knows(value) and self.skipped < MAX_SKIPPED):
                self.skipped += 1
                continue
            return value
        return None

    @cached_property
    def record(self) -> dict[str, Any] | None:
        """The record the key-based sniffs read: a JSONL file's first known line, an
        array's first item, or one object's top-level keys (with `messages` holding
        the first message's keys); None when it is not an object."""
        if self.kind == "[":
            return keys_at(self.inp, ("item",), self.decisive)
        if self.kind != "{":
            return None
        value = self.value
        if isinstance(value, dict):
            return value
        if self.jsonl:
            return None  # a first line that is no object, or none within the bounds
        return keys_at(self.inp, (), self.decisive) or {}

    def first_message(self) -> dict[str, Any]:
        """The record's first message (an object), or {}."""
        messages = (self.record or {}).get("messages")
        if isinstance(messages, list) and messages and isinstance(messages[0], dict):
            return messages[0]
        return {}


def keys_at(inp: Input, at: tuple[str, ...], decisive: frozenset[str]) -> dict[str, Any] | None:
    """The keys of the object at path `at`, with `messages` holding the first message's
    keys: all the key-based sniffs read. Nothing is built (any input may come here
    before its format is known: memory stays bounded, see `events`), and reading stops
    at the first key in `decisive` or at the end of that object."""
    target, n = list(at), len(at)
    keys: dict[str, Any] = {}
    first: dict[str, None] = {}
    first_done = started = False
    stream = json_stream()
    with inp.open() as fh:
        try:
            for path, event, value in walk(inp.reader(fh, deep=True)):
                if not started:
                    if len(path) == n and path == target and event != "end_array":
                        if event != "start_map":
                            return None
                        started = True
                    elif event == "end_array" and len(path) < n:
                        return None  # the array ended before an item
                    continue
                inside = len(path) > n and path[:n] == target
                if (inside and len(path) == n + 1 and path[n] == "history"
                        and event in ("start_array", "start_map")):
                    keys["history"] = [] if event == "start_array" else {}  # Chatbot UI: a list
                    break
                if event == "map_key" and len(path) == n + 1 and inside:
                    keys[value] = None
                    if value in decisive and value != "history":
                        break
                elif (inside and len(path) >= n + 2 and path[n] == "messages"
                      and path[n + 1] == "item" and not first_done):
                    if event == "map_key" and len(path) == n + 3:
                        first[value] = None
                    elif event == "end_map" and len(path) == n + 2:
                        first_done = True
                elif event == "end_map" and len(path) == n:
                    break  # the object ended
        except stream.JSONError as exc:
            reason = str(exc).splitlines()[0]
            raise InvalidInput(inp.name, f"JSON is malformed or truncated ({reason})") from None
    if not started:
        return None
    if "messages" in keys:
        keys["messages"] = [first] if first else []
    return keys
