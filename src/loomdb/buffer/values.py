"""What buffer operations answer: a document's pieces and authorship spans, the
alternatives at a position, a switch, where two paths part (plain values with
`to_json`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..headish import Position

At = str | Position


@dataclass(frozen=True, slots=True)
class Piece:
    """One node of the path and its share of the document: `text[start:end]`."""

    node: str
    start: int
    end: int
    author: str
    source: str
    role: str
    edited_from: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "start": self.start, "end": self.end, "author": self.author,
                "source": self.source, "role": self.role, "edited_from": self.edited_from}


@dataclass(frozen=True, slots=True)
class Span:
    """A run of the document written by one author: `(text, author, node)`.

    `node` is the path node holding the characters (None for the draft); `origin` the
    node whose author wrote them (the original, for unchanged text of a version);
    `model` is true when a model wrote them (buffer mode colours that text)."""

    start: int
    end: int
    text: str
    author: str
    node: str | None
    origin: str | None
    model: bool

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "author": self.author, "node": self.node}


@dataclass(frozen=True, slots=True)
class Document:
    """The document at a point: `text` = the path's text + `draft`."""

    text: str
    draft: str
    spans: list[Span]
    nodes: list[Piece]
    ref: str | None = None
    head: str | None = None

    @property
    def committed(self) -> str:
        """The text of the path alone (the document without its draft)."""
        return self.text[: len(self.text) - len(self.draft)]

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "draft": self.draft}


@dataclass(frozen=True, slots=True)
class Alternative:
    node: str
    slot: str
    author: str
    source: str
    text: str
    current: bool

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "slot": self.slot, "author": self.author,
                "source": self.source, "current": self.current, "text": self.text}


@dataclass(frozen=True, slots=True)
class Alternatives:
    """What could fill position `index` of a path: the sibling branches (one per slot
    under the same parent, each shown in the version the ref would use) and the
    versions of the slot the path uses there."""

    index: int
    node: str
    branches: list[Alternative]
    versions: list[Alternative]

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "node": self.node,
                "branches": [a.to_json() for a in self.branches],
                "versions": [a.to_json() for a in self.versions]}


@dataclass(frozen=True, slots=True)
class Switched:
    """Where `switch` left a ref: its head, whether it moved, the versions it selected."""

    ref: str
    head: str
    moved: bool
    selected: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"ref": self.ref, "head": self.head, "moved": self.moved,
                "selected": self.selected}


@dataclass(frozen=True, slots=True)
class Divergence:
    """Where the paths of `a` and `b` part.

    `kind`: `same` (one path), `prefix` (one continues the other), `version` (the same
    slot filled by different versions) or `branch` (different children of `base`).
    `index` is the first differing position, `base` the last shared node (None when
    even the roots differ), `offset` the length of the shared text. `a` and `b` list
    the nodes each path holds that the other does not (after a version divergence the
    paths usually share what follows, so those lists are short)."""

    kind: str
    index: int
    base: str | None
    offset: int
    a: list[str]
    b: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "index": self.index, "base": self.base,
                "offset": self.offset, "a": self.a, "b": self.b}
