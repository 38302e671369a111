"""Two paths compared: aligned from their common ancestor, message by message.

Both paths are read as walk rows (one query each, bodies included), so comparing two
5,000-message paths costs two reads and one pass. A message is the same on both sides
when its role and stored content are (the content is canonical JSON, so equal text is
equal bytes); otherwise the entry carries a line diff of the text and the tool calls
of each side by name and input. Paths in different trees have no common ancestor and
are aligned from their first message.

Properties: a path compared with itself has no entries; `diff(b, a)` is `diff(a, b)`
with every entry's sides swapped (`added` and `removed` exchanged, the text diff
read the other way).
"""

from __future__ import annotations

import difflib
import json
from itertools import zip_longest
from typing import Any

from ..content import plain_text
from ..store.base import BODY, ID, ROLE

Row = tuple[Any, ...]

#: how many lines around a change a text diff shows
CONTEXT_LINES = 1


def diff_rows(left: list[Row], right: list[Row]) -> dict[str, Any]:
    """`{"ancestor", "common", "entries", "changed"}`: the common ancestor's id (None
    when the paths share no node), how many messages the paths share, then one entry
    per aligned pair after it: `{"message", "status", "left", "right", ...}` (message
numbers count from 1 at the root) with status
    `same`, `changed`, `added` (only on the right) or `removed` (only on the left)."""
    common = 0
    for a, b in zip(left, right, strict=False):
        if a[ID] != b[ID]:
            break
        common += 1
    entries = []
    for i, (a, b) in enumerate(zip_longest(left[common:], right[common:]), common):
        entries.append(_entry(i, a, b))
    return {"ancestor": left[common - 1][ID] if common else None, "common": common,
            "entries": entries, "changed": sum(e["status"] != "same" for e in entries)}


def _side(row: Row | None) -> dict[str, Any] | None:
    if row is None:
        return None
    blocks = json.loads(row[BODY])
    calls = [{"name": b["name"], "input": b["input"]} for b in blocks
             if b.get("type") == "tool_use"]
    return {"node": row[ID], "role": row[ROLE], "text": plain_text(blocks), "tool_calls": calls}


def _entry(index: int, a: Row | None, b: Row | None) -> dict[str, Any]:
    left, right = _side(a), _side(b)
    if a is None or b is None:
        status = "added" if a is None else "removed"
    elif a[ROLE] == b[ROLE] and a[BODY] == b[BODY]:
        status = "same"
    else:
        status = "changed"
    entry: dict[str, Any] = {"message": index + 1, "status": status, "left": left, "right": right}
    if status == "changed" and left is not None and right is not None:
        entry["text_diff"] = list(difflib.unified_diff(
            left["text"].splitlines(), right["text"].splitlines(), "left", "right",
            n=CONTEXT_LINES, lineterm=""))[2:]
        entry["tool_calls_differ"] = left["tool_calls"] != right["tool_calls"]
    return entry
