"""Reading a file of JSON values, not of lines: agent session logs as they are written.

Coding agents append one JSON value per line, mostly; but a Codex rollout may hold
pretty-printed values spanning lines and a pi v1 session may hold two values on one
line. `read_values` yields each top-level value with where it starts (its line), read
incrementally so memory is bounded by the largest single value. Every value is
untrusted: one longer than the `session_line` limit, or nested deeper than `json_depth`, is
reported in place (an `InvalidInput` item, not a raise) and reading goes on after
it; a value that does not parse is reported the same way and reading resumes at the
next line. Nothing here follows a path a value names.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from typing import Any

from ..errors import InvalidInput
from . import budget
from .stream import Input

_CHUNK = 1024 * 1024
_DECODER = json.JSONDecoder()
_WS = " \t\r\n"
_NOT_SPACE = re.compile(r"[^ \t\r\n]")


def depth(value: Any, limit: int) -> int:
    """The nesting depth of a JSON value, counted without recursion (stops past `limit`)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            if deepest > limit:
                return deepest
            children = item.values() if isinstance(item, dict) else item
            stack.extend((c, level + 1) for c in children if isinstance(c, (dict, list)))
    return deepest


def read_values(
    inp: Input, *, max_value: int | None = None
) -> Iterator[tuple[int, Any | InvalidInput]]:
    """(line number from 1, value or the InvalidInput saying why it was refused); the
    limits are the input's (`session_line`, `json_depth`), `max_value` lower still."""
    limit = inp.limits.json_depth
    max_value = min(max_value or inp.limits.session_line, inp.limits.session_line)
    with inp.open() as fh:
        text = _Text(fh)
        while True:
            if not text.skip_space():
                if text.eof:
                    return
                text.fill()
                continue
            where, start = f"{inp.name} line {text.line}", text.pos
            try:
                value, end = _DECODER.raw_decode(text.buf, start)
            except RecursionError:
                yield text.line, InvalidInput(where, f"nested deeper than {limit}")
                text.skip_line()
                continue
            except json.JSONDecodeError as exc:
                pending = len(text.buf) - start
                if not text.eof and pending <= max_value and _incomplete(exc, text.buf):
                    text.fill()
                    continue
                reason = (f"a value longer than {max_value} bytes" if pending > max_value
                          else f"not JSON ({exc.msg})")
                yield text.line, InvalidInput(where, reason)
                text.skip_line()
                continue
            except ValueError as exc:  # e.g. an integer longer than Python reads
                yield text.line, InvalidInput(where, f"not JSON ({exc})")
                text.skip_line()
                continue
            line = text.line
            text.advance(end)
            if end - start > max_value:
                yield line, InvalidInput(where, f"a value longer than {max_value} bytes")
            elif depth(value, limit) > limit:
                yield line, InvalidInput(where, f"nested deeper than {limit}")
            else:
                yield line, value


class _Text:
    """The decoded text read so far, a cursor in it and the line the cursor is on.

    The cursor moves instead of the buffer being cut after every value (cutting would
    copy the rest of the buffer per value); the buffer is compacted when refilled."""

    def __init__(self, fh: Any) -> None:
        self.fh = fh
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.buf = ""
        self.pos = 0
        self.line = 1
        self.eof = False

    def fill(self) -> None:
        """Read more (as much again as is pending, so a long value is parsed O(log n)
        times); a UTF-8 character split by the read waits for its end."""
        budget.check()
        pending = self.buf[self.pos:]
        chunk = self.fh.read(max(_CHUNK, len(pending)))
        self.eof = not chunk
        text = self.decoder.decode(chunk, final=self.eof)
        if self.line == 1 and not pending and not self.pos and text.startswith("\ufeff"):
            text = text[1:]  # a UTF-8 byte order mark before the first value
        self.buf = pending + text
        self.pos = 0

    def skip_space(self) -> bool:
        """Move to the next value's first character; False when the buffer runs out."""
        found = _NOT_SPACE.search(self.buf, self.pos)
        end = found.start() if found else len(self.buf)
        self.line += self.buf.count("\n", self.pos, end)
        self.pos = end
        return found is not None

    def advance(self, end: int) -> None:
        self.line += self.buf.count("\n", self.pos, end)
        self.pos = end

    def skip_line(self) -> None:
        """Drop the rest of the line a bad value starts on (reading on when it is long)."""
        while True:
            cut = self.buf.find("\n", self.pos)
            if cut >= 0:
                self.advance(cut + 1)
                return
            if self.eof:
                self.pos = len(self.buf)
                return
            self.buf, self.pos = "", 0
            self.fill()


def _incomplete(exc: json.JSONDecodeError, buf: str) -> bool:
    """Did the value fail only because the buffer ends inside it (read more), rather
    than because it is malformed where it stands (report it)?"""
    return exc.pos >= len(buf.rstrip(_WS)) or exc.msg.startswith("Unterminated string")
