"""How deeply JSON nests, measured before anything deep is built.

A JSON parser that builds values, or that names every event by its path (ijson's
prefixes, which grow with the depth, so a file of nested `[` costs memory in the
square of its size), can be brought down by nesting alone. So depth is measured on
the bytes first: `DepthScanner` follows the bracket depth outside strings chunk by
chunk, at the speed of the `re` and `bytes` C code (strings are cut out by one regular
expression, the brackets that remain are counted), and refuses a text nested deeper
than its limit before a parser sees the chunk. `loads` is `json.loads` behind that
scan; `depth` and `check_depth` measure a value already built (content, options),
without recursion.

Depth counts containers: a scalar is 0, `[]` and `{}` are 1, `[[1]]` is 2.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate, chain
from typing import Any

from .errors import InvalidInput

#: a JSON string as it appears in the bytes, escapes included, or one that runs on to the
#: end of the chunk (an unrolled loop: no backtracking, so linear whatever the input)
_STRING = re.compile(rb'"[^"\\]*(?:\\[\s\S][^"\\]*)*(?:"|\\?\Z)')
#: appended to a chunk, it tells whether a string is open at the end: it closes that
#: string and leaves `!` outside; otherwise it is a string of its own, deleted
_PROBE = b'"!'
#: the rest of a string that began in an earlier chunk: up to its closing quote
_STRING_REST = re.compile(rb'[^"\\]*(?:\\[\s\S][^"\\]*)*')
#: every byte but the four brackets (deleted to leave the brackets alone)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
#: brackets as steps: opening 1, closing 255 (read as -1)
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")


class TooDeep(InvalidInput):
    """A JSON text or value nests deeper than the limit."""


class DepthScanner:
    """Follows the nesting depth of a JSON text given in chunks; `feed` raises TooDeep
    as soon as the depth passes `limit` (the parser then never sees that chunk)."""

    def __init__(self, limit: int, where: str = "JSON") -> None:
        self.limit = limit
        self.where = where
        self.depth = 0
        #: inside a string that a chunk boundary cut: None, or the bytes carried over
        #: (its opening quote, and a backslash when the chunk ended inside an escape)
        self._open: bytes | None = None

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        data = chunk
        if self._open is not None:
            data = self._open + data
            stop = _string_end(data)
            if stop >= len(data) or data[stop:stop + 1] != b'"':
                self._open = _carried(data, stop)
                return
            self._open = None
            data = data[stop + 1:]
        outside, self._open = _outside_strings(data)
        brackets = outside.translate(None, _NOT_BRACKETS)
        if not brackets:
            return
        opens = brackets.count(b"[") + brackets.count(b"{")
        if self.depth + opens > self.limit:
            steps = memoryview(brackets.translate(_STEPS)).cast("b")
            if max(accumulate(steps, initial=self.depth)) > self.limit:
                raise TooDeep(self.where, f"JSON nested deeper than {self.limit} levels")
        self.depth = max(0, self.depth + 2 * opens - len(brackets))


def _outside_strings(data: bytes) -> tuple[bytes, bytes | None]:
    """(`data` with its strings cut out, what a string left open at its end carries on)."""
    if not data.endswith(b"\\"):
        outside = _STRING.sub(b"", data + _PROBE)
        if outside.endswith(b"!"):
            return outside[:-1], b'"'
        return outside, None
    # a backslash at the end may be an escape cut in two: walk the strings one by one
    pieces: list[bytes] = []
    pos = 0
    while (quote := data.find(b'"', pos)) >= 0:
        pieces.append(data[pos:quote])
        stop = _string_end(data, quote)
        if stop >= len(data) or data[stop:stop + 1] != b'"':
            return b"".join(pieces), _carried(data, stop)
        pos = stop + 1
    pieces.append(data[pos:])
    return b"".join(pieces), None


def _string_end(data: bytes, start: int = 0) -> int:
    """Where the string opened at `data[start]` stops: its closing quote, a backslash
    left open at the very end, or the end of `data`."""
    found = _STRING_REST.match(data, start + 1)
    return found.end() if found else start + 1


def _carried(data: bytes, stop: int) -> bytes:
    """What an unfinished string carries into the next chunk: its quote, and the
    backslash of an escape the chunk boundary cut in two."""
    return b'"\\' if stop < len(data) else b'"'


def check_text(data: bytes | str, limit: int, where: str = "JSON") -> None:
    """Refuse a whole JSON text nested deeper than `limit` (TooDeep), without parsing it."""
    DepthScanner(limit, where).feed(data.encode("utf-8", "surrogatepass")
                                    if isinstance(data, str) else data)


def loads(data: bytes | str, limit: int, where: str = "JSON") -> Any:
    """`json.loads`, refusing (TooDeep) a text nested deeper than `limit` before parsing."""
    check_text(data, limit, where)
    return json.loads(data)


def depth(value: Any, stop: int | None = None) -> int:
    """How deeply a built value nests (lists, tuples and dicts); counting stops once
    `stop` is passed (the answer is then `stop + 1`). Recursive only as far as `stop`
    (the few levels of a limit, walked fastest by calls), else with a stack of its own."""
    if stop is not None and stop <= _RECURSE:
        return _bounded(value, stop)
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        kind = type(item)
        if kind is dict:
            children = item.values()
        elif kind is list or kind is tuple:
            children = item
        else:
            continue
        level += 1
        if level > deepest:
            deepest = level
            if stop is not None and deepest > stop:
                return deepest
        stack.extend((child, level) for child in children if type(child) in _CONTAINERS)
    return deepest


_CONTAINERS = (dict, list, tuple)
#: limits up to this many levels are checked by recursion (well inside Python's own)
_RECURSE = 256


def _bounded(value: Any, left: int) -> int:
    kind = type(value)
    if kind is dict:
        children: Any = value.values()
    elif kind is list or kind is tuple:
        children = value
        if left > 1 and _flat_records(value):  # a chat's messages: two levels, no walk
            return 2
    else:
        return 0
    if left <= 0:
        return 1  # one level more than allowed: the caller has its answer
    deepest = 0
    for child in children:
        if type(child) in _CONTAINERS:
            found = _bounded(child, left - 1)
            if found > deepest:
                deepest = found
    return deepest + 1


def _flat_records(items: Any) -> bool:
    """A non-empty list of dicts whose values are no containers (told by the C loops of
    `set` and `map` rather than a call per item)."""
    if not items or set(map(type, items)) != {dict}:
        return False
    return _CONTAINERS_SET.isdisjoint(set(map(type, chain.from_iterable(
        map(dict.values, items)))))


_CONTAINERS_SET = frozenset(_CONTAINERS)


def check_depth(value: Any, limit: int, where: str) -> None:
    """Refuse (TooDeep, an InvalidInput naming `where`) a value nested deeper than `limit`."""
    if value is not None and depth(value, limit) > limit:
        raise TooDeep(where, f"nested deeper than {limit} levels (JSON objects and arrays)")


__all__ = ["DepthScanner", "TooDeep", "check_depth", "check_text", "depth", "loads"]
