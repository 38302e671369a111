"""Editing a range of the document: new versions of exactly the nodes it touches (and
the draft, for the part of the range inside it), in one transaction."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..headish import Position
from ..model import Node
from ..storage_ops import storage
from ..store.base import ID, SLOT
from .document import path_texts
from .drafts import (
    check_text,
    draft_ref,
    head_of,
    position,
    read_draft,
    require_buffer,
    write_draft,
)
from .values import At

if TYPE_CHECKING:
    from ..loom import Loom


def edit_span(
    loom: Loom, at: At, start: int, end: int, new_text: str, *, author: str | None = None
) -> list[Node]:
    """Replace `document.text[start:end]` with `new_text`.

    Committed text changes only through new versions, one per node the range touches
    (a node it covers entirely becomes an empty version; `new_text` goes into the
    first); a node whose text would not change gets none. Through a session or view
    the versions are selected there at once; other refs keep theirs. The part of the
    range inside the draft edits the draft. An empty range inserts: into the node the
    position ends (the start of the document: the first node), or at the end of the
    document into the draft. All in one transaction; returns the versions written."""
    pos = position(loom, at)
    require_buffer(loom, pos.tree)
    check_text(loom, new_text, "text")
    ref = draft_ref(loom, pos)
    with storage(loom).transaction():
        if ref is not None:
            ref = loom.ref(ref.name)
            pos = Position(head_of(loom, ref), ref.tree, ref, pos.session, dict(ref.selections))
        draft = read_draft(loom, ref.name) if ref else ""
        rows = loom.path_rows(pos)
        texts = path_texts(rows)
        committed = sum(map(len, texts))
        total = committed + len(draft)
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end <= total):
            raise InvalidInput(
                f"range {start}:{end}", f"must satisfy 0 <= start <= end <= {total} (the document length)"
            )
        edits = _split(rows, texts, start, end, new_text) if start < committed else []
        if end > committed or start >= committed:
            if ref is None:
                raise InvalidInput(
                    f"range {start}:{end}",
                    "reaches the draft, and a draft belongs to a session or view; name one",
                )
            lo, hi = max(start - committed, 0), end - committed
            write_draft(loom, ref.name, draft[:lo] + (new_text if start >= committed else "")
                         + draft[max(hi, 0):])
        nodes = storage(loom).nodes_by_id([nid for nid, _ in edits])
        index = {r[ID]: i for i, r in enumerate(rows)}
        selections = dict(pos.selections)
        versions: list[Node] = []
        for nid, replacement in edits:
            old = nodes[nid]
            if any(b["type"] != "text" for b in old.content):
                raise InvalidInput(
                    f"node {nid}", "holds more than text; edit it with `loomdb edit` instead"
                )
            # a version remembers the versions its ref shows above it (so its id keeps
            # naming this text in this context); selections below it could never apply
            above = {r[SLOT] for r in rows[: index[nid]]}
            where = Position(nid, pos.tree, pos.ref, None,
                             {s: v for s, v in selections.items() if s in above})
            version = loom.edit(where, replacement, author=author)
            selections[version.slot] = version.id
            versions.append(version)
    return versions


def _split(
    rows: Sequence[tuple[Any, ...]], texts: Sequence[str], start: int, end: int, new_text: str
) -> list[tuple[str, str]]:
    """(node, its new text) for every node the committed part of [start, end) touches."""
    bounds: list[tuple[int, int]] = []
    at_char = 0
    for body in texts:
        bounds.append((at_char, at_char + len(body)))
        at_char += len(body)
    if start == end:  # an insertion: into the node ending there, else the one starting there
        hit = next((i for i, (s, e) in enumerate(bounds) if s < start <= e), None)
        if hit is None:
            hit = next(i for i, (s, e) in enumerate(bounds) if s <= start < e)
        touched = [hit]
    else:
        touched = [i for i, (s, e) in enumerate(bounds) if max(s, start) < min(e, end)]
    out: list[tuple[str, str]] = []
    for k, i in enumerate(touched):
        s, _ = bounds[i]
        body = texts[i]
        a, b = max(start, s) - s, min(end, bounds[i][1]) - s
        new = body[:a] + (new_text if k == 0 else "") + body[b:]
        if new != body:
            out.append((rows[i][ID], new))
    return out
