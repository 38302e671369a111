"""JSON read event by event in memory linear in its nesting, whatever the nesting.

ijson names every event by its path (`item.children.item.children...`): each level of
nesting makes every event under it longer, so a deep document costs memory and time in
the square of its depth (a 1 MB file of nested arrays took 8 GB). The parsers of
ordinary exports keep using ijson's fast `items`, behind a depth scan that bounds that
square to a few kilobytes (`stream.CountingReader`). Two readers must go deeper: format
detection, which must stay bounded for *any* input before it knows the format, and
socketteer/loom saves, whose nesting grows with the story (two levels a turn). They
read ijson's `basic_parse` events (no paths) and keep the path themselves, one entry
per open container: `walk` yields each event with that path, `values` builds the
values found at one path with ijson's `ObjectBuilder` (no recursion).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import IO, Any

from ..errors import MissingExtra

try:
    import ijson
except ImportError:  # pragma: no cover - depends on the installed extras
    ijson = None

_OPEN = frozenset({"start_map", "start_array"})
_CLOSE = frozenset({"end_map", "end_array"})


def json_stream() -> Any:
    """The ijson module, or MissingExtra saying how to install it (here, below
    `stream`, which reads through `values` too)."""
    if ijson is None:
        raise MissingExtra("streaming JSON import", "interop")
    return ijson


def walk(reader: io.RawIOBase | IO[bytes]) -> Iterator[tuple[list[str | None], str, Any]]:
    """(path, event, value) for every event: `path` holds, per open container, the key
    being read (a map: its last key, None before the first; an array: "item"). The
    list is live: read it at once, never keep it."""
    stream = json_stream()
    path: list[str | None] = []
    for event, value in stream.basic_parse(reader, use_float=True):
        if event == "map_key":
            path[-1] = value
        elif event in _CLOSE:
            path.pop()
        yield path, event, value
        if event == "start_map":
            path.append(None)
        elif event == "start_array":
            path.append("item")


def values(reader: io.RawIOBase | IO[bytes], at: tuple[str, ...], *, map_type: type = dict,
           multiple_values: bool = False) -> Iterator[Any]:
    """Each value found at path `at` (`("item",)`: the items of a top-level array;
    `()`: the document itself), like ijson's `items` without its paths."""
    stream = json_stream()
    builder_type = stream.ObjectBuilder
    wanted = list(at)
    path: list[str | None] = []
    builder: Any = None
    level = 0
    for event, value in stream.basic_parse(reader, use_float=True,
                                           multiple_values=multiple_values):
        if builder is not None:
            builder.event(event, value)
            if event in _OPEN:
                level += 1
            elif event in _CLOSE:
                level -= 1
                if level == 0:
                    yield builder.value
                    builder = None
            continue
        if event == "map_key":
            path[-1] = value
        elif event in _CLOSE:
            path.pop()
        elif len(path) == len(wanted) and path == wanted:
            if event in _OPEN:
                builder = builder_type(map_type=map_type)
                builder.event(event, value)
                level = 1
            else:
                yield value
        elif event == "start_map":
            path.append(None)
        elif event == "start_array":
            path.append("item")


__all__ = ["values", "walk"]
