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
    rest_a, rest_b = left[common:], right[common:]
    # every body after the ancestor in one parse (stored bodies are canonical JSON)
    bodies = json.loads("[" + ",".join(r[BODY] for r in rest_a + rest_b) + "]")
    sides_a = [_side(r, body) for r, body in zip(rest_a, bodies, strict=False)]
    sides_b = [_side(r, body) for r, body in zip(rest_b, bodies[len(rest_a):], strict=True)]
    entries = [_entry(i, a, b, sa, sb) for i, (a, b, sa, sb) in enumerate(
        zip_longest(rest_a, rest_b, sides_a, sides_b), common)]
    return {"ancestor": left[common - 1][ID] if common else None, "common": common,
            "entries": entries, "changed": sum(e["status"] != "same" for e in entries)}


def _side(row: Row, blocks: list[dict[str, Any]]) -> dict[str, Any]:
    if len(blocks) == 1 and blocks[0].get("type") == "text":  # the common message
        return {"node": row[ID], "role": row[ROLE], "text": blocks[0]["text"], "tool_calls": []}
    calls = [{"name": b["name"], "input": b["input"]} for b in blocks
             if b.get("type") == "tool_use"]
    return {"node": row[ID], "role": row[ROLE], "text": plain_text(blocks), "tool_calls": calls}


def _entry(index: int, a: Row | None, b: Row | None, left: dict[str, Any] | None,
           right: dict[str, Any] | None) -> dict[str, Any]:
    if a is None or b is None:
        status = "added" if a is None else "removed"
    elif a[ROLE] == b[ROLE] and a[BODY] == b[BODY]:
        status = "same"
    else:
        status = "changed"
    entry: dict[str, Any] = {"message": index + 1, "status": status, "left": left, "right": right}
    if status == "changed" and left is not None and right is not None:
        entry["text_diff"] = text_diff(left["text"], right["text"])
        entry["tool_calls_differ"] = left["tool_calls"] != right["tool_calls"]
    return entry


def text_diff(old: str, new: str) -> list[str]:
    """The unified diff's lines (its two file headers left out) from `old` to `new`;
    two different one-line texts, the common case, without difflib's search."""
    a, b = old.splitlines(), new.splitlines()
    if len(a) == len(b) == 1 and a != b:
        return ["@@ -1 +1 @@", f"-{a[0]}", f"+{b[0]}"]
    return list(difflib.unified_diff(a, b, "left", "right", n=CONTEXT_LINES, lineterm=""))[2:]
