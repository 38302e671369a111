"""Plain values that the store hands out: trees, nodes, edges, refs, metadata, ref moves.

They are frozen dataclasses and carry ids, never rows or connections. Constructing
them is the backend's job; reasoning about them (paths, versions, context) lives in
the modules above the backends.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

MODES = ("dialogue", "buffer")
ROLES = ("user", "assistant", "system", "tool")
SOURCES = ("human", "trigger", "agent", "webhook", "cron", "event", "import")
KINDS = ("message", "compaction")
EDGE_TYPES = ("continuation", "annotation", "link")
SOURCE_ROLES = ("primary", "context", "instruction")
REF_KINDS = ("session", "view", "bookmark")

Mode = Literal["dialogue", "buffer"]
RefKind = Literal["session", "view", "bookmark"]


_RANDOM_BITS = 80
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # the ULID alphabet
_PAIRS = [a + b for a in _CROCKFORD for b in _CROCKFORD]  # every 10-bit value, as 2 digits
_SHIFTS = tuple(range(120, -1, -10))
_last_id = [0, 0]  # millisecond and random part of the last id this process made
_id_lock = threading.Lock()


def new_id() -> str:
    """A fresh ULID: unique, sortable by creation time, 26 Crockford base32 characters.

    Monotonic within a process, as the ULID spec describes: ids made in the same
    millisecond count up from that millisecond's random start, so ids sort in the order
    they were made and each new node lands at the right edge of the id index."""
    ms = time.time_ns() // 1_000_000
    with _id_lock:
        last_ms, last_rnd = _last_id
        if ms <= last_ms and last_rnd + 1 < 1 << _RANDOM_BITS:
            ms, rnd = last_ms, last_rnd + 1
        else:
            ms = max(ms, last_ms + (ms <= last_ms))
            rnd = int.from_bytes(os.urandom(10)) >> 1  # headroom to count up
        _last_id[0], _last_id[1] = ms, rnd
    return ulid_text(ms << _RANDOM_BITS | rnd)


def ulid_text(value: int) -> str:
    """The 26-character form of a 128-bit ULID, exactly as `str(ulid.ULID)` writes it (a
    test pins the two together), two digits per step: new ids are on the append path."""
    return "".join([_PAIRS[(value >> s) & 1023] for s in _SHIFTS])


#: the last whole second `now` wrote and its text up to the seconds, swapped as one
#: tuple so that a thread never pairs one second with another's text
_second: list[tuple[int, str]] = [(-1, "")]


def now() -> str:
    """The current UTC time as ISO 8601 with microseconds, the form every timestamp takes.

    Every append stamps a node: the date part is formatted once per second, then only the
    microseconds after it (the text `datetime.isoformat` writes; a test pins the two)."""
    sec, frac = divmod(time.time_ns() // 1000, 1_000_000)
    known, text = _second[0]
    if known != sec:
        text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec))
        _second[0] = (sec, text)
    return f"{text}.{frac:06d}Z"


def iso(moment: datetime) -> str:
    """ISO 8601 UTC with microseconds and a `Z`; naive datetimes are taken as UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds")[:-6] + "Z"


@dataclass(frozen=True, slots=True)
class Tree:
    id: str
    title: str
    mode: str
    created_at: str
    updated_at: str
    system: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    root: str | None = None
    archived_at: str | None = None
    lineage: dict[str, Any] | None = None
    nodes: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "title": self.title, "mode": self.mode, "nodes": self.nodes,
            "root": self.root, "system": self.system, "options": self.options,
            "created_at": self.created_at, "updated_at": self.updated_at,
            "archived_at": self.archived_at, "lineage": self.lineage,
        }


@dataclass(frozen=True, slots=True)
class Anchor:
    """What a new node is built from its parent: a Node carries the same fields, and
    appending by id reads only these (no content) when the parent is not at hand."""

    id: str
    tree: str
    slot: str
    depth: int
    total_tokens: int
    chain_hash: str


@dataclass(frozen=True, slots=True)
class Node:
    """One immutable message. `slot` is the position it fills: itself, or for a version
    (an edit) the node it was first edited from; children hang on slots, not versions."""

    id: str
    tree: str
    parent: str | None
    slot: str
    depth: int
    role: str
    kind: str
    author: str
    source: str
    content_id: str
    content: list[dict[str, Any]]
    created_at: str
    chain_hash: str
    edited_from: str | None = None
    options: dict[str, Any] | None = None
    cache: bool = False
    tokens: int = 0
    total_tokens: int = 0
    provenance: dict[str, Any] | None = None
    origin: dict[str, Any] | None = None
    sources: tuple[tuple[str, str], ...] = ()
    selections: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "tree": self.tree, "parent": self.parent, "slot": self.slot,
            "depth": self.depth, "role": self.role, "kind": self.kind, "author": self.author,
            "source": self.source, "content_id": self.content_id, "content": self.content,
            "created_at": self.created_at, "chain_hash": self.chain_hash,
            "edited_from": self.edited_from, "options": self.options, "cache": self.cache,
            "tokens": self.tokens, "total_tokens": self.total_tokens,
            "provenance": self.provenance, "origin": self.origin,
            "sources": [{"node": n, "role": r} for n, r in self.sources],
            "selections": self.selections,
        }


@dataclass(frozen=True, slots=True)
class Edge:
    """An annotation or link edge. Continuation edges are the nodes' own parent and
    `sources` fields; they are reported as Edge values but stored with the node."""

    id: str
    tree: str
    type: str
    sources: tuple[tuple[str, str], ...]
    target: str
    created_at: str

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "tree": self.tree, "type": self.type, "target": self.target,
            "sources": [{"node": n, "role": r} for n, r in self.sources],
            "created_at": self.created_at,
        }


@dataclass(frozen=True, slots=True)
class Meta:
    """The mutable overlay on a node; never part of its hash."""

    bookmarked: bool = False
    label: str | None = None
    pruned: bool = False
    excluded: bool = False
    tags: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "bookmarked": self.bookmarked, "label": self.label, "pruned": self.pruned,
            "excluded": self.excluded, "tags": list(self.tags),
        }


@dataclass(frozen=True, slots=True)
class Ref:
    """A named pointer: a session (moves with appends), a view, or a bookmark (fixed)."""

    name: str
    kind: str
    tree: str
    node: str
    created_at: str
    updated_at: str
    selections: dict[str, str] = field(default_factory=dict)
    origin: dict[str, Any] | None = None
    #: the line of the ref's log that brought it here: a move must write line seq + 1
    seq: int = 0

    @property
    def forked_from(self) -> dict[str, Any] | None:
        """`{"ref", "node"}` this session or view was forked from (None: not a fork)."""
        found = (self.origin or {}).get("forked_from")
        return found if isinstance(found, dict) else None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "kind": self.kind, "tree": self.tree, "node": self.node,
            "selections": self.selections, "origin": self.origin,
            "created_at": self.created_at, "updated_at": self.updated_at,
        }


@dataclass(frozen=True, slots=True)
class RefMove:
    """One line of a ref's log: who moved it, when, from where to where, and why."""

    seq: int
    ref: str
    at: str
    old: str | None
    new: str | None
    actor: str
    reason: str
    #: the tree of the ref the line belongs to (what a store split by tree keys it by);
    #: None: the ref's own tree, looked up when the line is written
    tree: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq, "ref": self.ref, "at": self.at, "from": self.old, "to": self.new,
            "by": self.actor, "reason": self.reason,
        }
