"""The document at a point: the path's text and the draft, cut into pieces, and who
wrote each character (a version's text diffed against the original of its slot)."""

from __future__ import annotations

import json
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .. import content as C
from ..errors import MissingExtra
from ..storage_ops import storage
from ..store.base import BODY, ID, SLOT
from .drafts import draft_ref, position, read_draft
from .values import At, Document, Piece, Span

if TYPE_CHECKING:
    from ..loom import Loom


def path_texts(rows: Sequence[tuple[Any, ...]]) -> list[str]:
    """The plain text of each row, parsing every stored body in one go."""
    if not rows:
        return []
    bodies = json.loads("[" + ",".join(r[BODY] for r in rows) + "]")
    return [C.plain_text(b) for b in bodies]


def text(loom: Loom, at: At) -> str:
    """The document at `at` as plain text (the path's text + draft), without authorship."""
    pos = position(loom, at)
    ref = draft_ref(loom, pos)
    draft = read_draft(loom, ref.name) if ref else ""
    return "".join(path_texts(loom.path_rows(pos))) + draft


def document(loom: Loom, at: At) -> Document:
    """The document at `at` with its pieces (one per path node) and authorship spans."""
    pos = position(loom, at)
    ref = draft_ref(loom, pos)
    draft = read_draft(loom, ref.name) if ref else ""
    rows = loom.path_rows(pos)
    texts = path_texts(rows)
    ids = [r[ID] for r in rows]
    info = _authors(loom, ids)
    info.update(_authors(loom, list({r[SLOT] for r in rows if r[SLOT] != r[ID]} - set(info))))
    pieces: list[Piece] = []
    spans: list[Span] = []
    at_char = 0
    for row, body in zip(rows, texts, strict=True):
        nid, slot = row[ID], row[SLOT]
        who = info[nid]
        end = at_char + len(body)
        pieces.append(Piece(nid, at_char, end, who.author, who.source, who.role, who.edited_from))
        if body:
            if slot == nid:
                _add(spans, Span(at_char, end, body, who.author, nid, nid, who.model))
            else:
                _attribute(spans, at_char, body, nid, who, slot, info[slot])
        at_char = end
    if draft:
        _add(spans, Span(at_char, at_char + len(draft), draft, loom.actor, None, None, False))
    return Document("".join(texts) + draft, draft, spans, pieces,
                    ref.name if ref else None, pos.node)


def authorship(loom: Loom, at: At) -> list[Span]:
    """Who wrote each character of the document at `at` (spans cover it exactly)."""
    return document(loom, at).spans


@dataclass(frozen=True, slots=True)
class _Who:
    """What authorship needs of a node (immutable, so cached per Loom)."""

    author: str
    source: str
    role: str
    edited_from: str | None
    text: str

    @property
    def model(self) -> bool:
        return self.role == "assistant" and self.source != "human"


_WHO: weakref.WeakKeyDictionary[Any, dict[str, _Who]] = weakref.WeakKeyDictionary()
_WHO_MAX = 200_000


def _authors(loom: Loom, ids: Sequence[str]) -> dict[str, _Who]:
    """Author facts of nodes: from the cache, else one `get_nodes` for the rest."""
    cache = _WHO.setdefault(loom, {})
    out = {i: cache[i] for i in ids if i in cache}
    missing = [i for i in ids if i not in out]
    if missing:
        if len(cache) + len(missing) > _WHO_MAX:
            cache.clear()
        keep = storage(loom).committed()  # never remember what a rollback could undo
        for nid, node in storage(loom).nodes_by_id(missing).items():
            out[nid] = _Who(node.author, node.source, node.role, node.edited_from,
                            C.plain_text(node.content))
            if keep:
                cache[nid] = out[nid]
    return out


def _add(spans: list[Span], span: Span) -> None:
    """Append a span, merging it into the previous one when nothing but position differs."""
    if spans:
        last = spans[-1]
        if (last.end == span.start and last.node == span.node and last.origin == span.origin
                and last.author == span.author and last.model == span.model):
            spans[-1] = Span(last.start, span.end, last.text + span.text, last.author,
                             last.node, last.origin, last.model)
            return
    spans.append(span)


def _attribute(
    spans: list[Span], start: int, body: str, nid: str, version: _Who, slot: str, original: _Who
) -> None:
    """Spans of a version's text: diffed against the original of its slot."""
    at_char = start
    for inserted, chunk in diff(original.text, body):
        who, origin = (version, nid) if inserted else (original, slot)
        _add(spans, Span(at_char, at_char + len(chunk), chunk, who.author, nid, origin,
                         who.model))
        at_char += len(chunk)


def diff(original: str, edited: str) -> tuple[tuple[bool, str], ...]:
    """`edited` cut into (inserted?, chunk) runs: a character-level diff against
    `original` (diff-match-patch), semantically cleaned so that a rewritten word is
    one insertion rather than a speckle of coincidental matches. Deletions leave no
    characters, so the chunks concatenate to `edited` exactly."""
    return _diff(original, edited)


@lru_cache(maxsize=4096)
def _diff(original: str, edited: str) -> tuple[tuple[bool, str], ...]:
    try:
        from diff_match_patch import diff_match_patch
    except ImportError:
        raise MissingExtra("buffer authorship", "buffer") from None
    dmp = diff_match_patch()
    dmp.Diff_Timeout = 1.0
    ops = dmp.diff_main(original, edited, False)
    dmp.diff_cleanupSemantic(ops)
    return tuple((op == dmp.DIFF_INSERT, chunk) for op, chunk in ops
                 if op != dmp.DIFF_DELETE and chunk)
