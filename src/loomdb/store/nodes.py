"""Nodes, contents, paths and edges: the interface. Their layout and hot paths differ
per dialect (see sqlite/nodes.py and postgres/nodes.py), so each backend implements it.

Walks return `PathRow`s, head first: the path of a 10,000-turn thread is the hottest
read in loomdb, so a path row holds only what path resolution and context need, and
it is the database driver's own tuple, typed field by field (`PathRow`), read by the
`Final` positions below: building an object per row would cost 5-10 ms at 10k turns,
a fifth of the budget of a context read."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from typing import Final, TypedDict

from ..model import Anchor, Edge, Node

#: node flags: the node stores version selections / has extra continuation sources
HAS_SELECTIONS = 1
HAS_SOURCES = 2
#: (PostgreSQL) the node's own copy of its content was redacted by its owner: it reads
#: as TOMBSTONE while other nodes holding the same content keep it (SQLite marks such a
#: node by holding neither a body nor a pointer to one)
REDACTED_COPY = 4

#: the canonical body a redacted content keeps: one text block saying so (its content
#: id stays, so the chain hash of every node holding it still verifies)
TOMBSTONE = '[{"text":"[redacted]","type":"text"}]'


#: one node of a walk: (id, slot, depth, role, kind, body: canonical JSON text of the
#: content, options: JSON text or None, cache: 0/1, flags: HAS_SELECTIONS|HAS_SOURCES)
PathRow = tuple[str, str, int, str, str, str, "str | None", int, int]

#: one node of a `climb`: (the end climbed from, id, slot, depth, names the source)
ClimbRow = tuple[str, str, str, int, bool]

#: the columns of a PathRow, and their positions
PATH_COLUMNS: Final = ("id", "slot", "depth", "role", "kind", "body", "options", "cache", "flags")
ID: Final = 0
SLOT: Final = 1
DEPTH: Final = 2
ROLE: Final = 3
KIND: Final = 4
BODY: Final = 5
OPTIONS: Final = 6
CACHE: Final = 7
FLAGS: Final = 8


#: one node of a tree's shape, for drawing it whole: (id, parent, slot, edited_from, role,
#: kind, head: the first `SHAPE_HEAD` characters of its stored content as text, or bytes
#: cut anywhere, None when the content is gone)
ShapeRow = tuple[str, "str | None", str, "str | None", str, str, "str | bytes | None"]
#: how much of each stored content a shape row carries (enough for a short preview)
SHAPE_HEAD: Final = 200


class ChainRow(TypedDict):
    """The raw hashed fields of one node, for verification: nothing parsed, so a
    corrupt row still reaches the verifier (body as stored bytes, None if missing)."""

    id: str
    parent: str | None
    content_id: str | None
    body: bytes | None
    created_at: str
    author: str
    role: str
    kind: str
    edited_from: str | None
    options: str | None
    provenance: str | None
    chain_hash: str
    sources: list[tuple[str, str]]
    selections: dict[str, str]


class NodeStore(ABC):
    """Immutable nodes with their contents, and the queries that walk them."""

    @abstractmethod
    def get_content(self, content_id: str) -> bytes | None:
        """The canonical bytes stored under a content id, or None."""

    @abstractmethod
    def insert_node(self, node: Node, body: bytes, flags: int) -> None:
        """Insert a node with its extra sources and stored selections, and its content
        (`body`, the canonical bytes of `node.content`) unless that content is stored."""

    @abstractmethod
    def anchor(self, node_id: str) -> Anchor | None:
        """The fields a child is built from, without the content (see model.Anchor)."""

    @abstractmethod
    def get_nodes(self, ids: Sequence[str]) -> dict[str, Node]:
        """Nodes by id (missing ids are absent from the result), in one query."""

    @abstractmethod
    def node_ids_with_prefix(self, prefix: str, limit: int) -> list[str]:
        """Node ids starting with `prefix`, in order, at most `limit`."""

    @abstractmethod
    def climb(self, tree: str, ends: Sequence[str], steps: int, source: str) -> list[ClimbRow]:
        """The nodes `ends` of tree `tree` and up to `steps` ancestors of each, in one
        query, each step one probe of the primary key: (the end it climbs from, id,
        slot, depth, whether the node has `source` as a context source)."""

    @abstractmethod
    def walk(self, node_id: str, min_depth: int = 0) -> list[PathRow]:
        """The created-from chain from `node_id` up to the root (or up to `min_depth`:
        the end of a long path), head first, in one query."""

    @abstractmethod
    def path_rows(self, ids: Sequence[str]) -> dict[str, PathRow]:
        """Walk-shaped rows for given nodes (used for the versions a ref selects)."""

    @abstractmethod
    def node_selections(self, ids: Sequence[str]) -> dict[str, dict[str, str]]:
        """Stored version selections of the given nodes: node -> {slot: version}."""

    @abstractmethod
    def node_sources(self, ids: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
        """Extra continuation sources of the given nodes: node -> [(source, role)]."""

    @abstractmethod
    def children(self, slot: str) -> list[str]:
        """Nodes created under any version of `slot`, excluding versions of each other."""

    @abstractmethod
    def versions(self, slot: str) -> list[str]:
        """Every node filling `slot` (the original first), by creation."""

    def children_of(self, slots: Sequence[str], tree_id: str) -> dict[str, list[str]]:
        """`children` of each of the tree's `slots` (a page of a thread's branches): one
        query where a backend can (a round trip per slot costs a networked database
        more than the query)."""
        return {slot: self.children(slot) for slot in dict.fromkeys(slots)}

    def versions_of(self, slots: Sequence[str], tree_id: str) -> dict[str, list[str]]:
        """`versions` of each of the tree's `slots`, in one query."""
        return {slot: self.versions(slot) for slot in dict.fromkeys(slots)}

    @abstractmethod
    def leaves(self, tree_id: str) -> list[str]:
        """Nodes of the tree whose slot has no children, by creation."""

    @abstractmethod
    def branch_points(self, tree_id: str) -> list[str]:
        """Slots of the tree with two or more children, by creation."""

    @abstractmethod
    def tree_nodes(self, tree_id: str) -> Iterator[Node]:
        """Every node of a tree (with sources and selections), by creation."""

    @abstractmethod
    def tree_shape(self, tree_id: str) -> list[ShapeRow]:
        """Every node of a tree as a `ShapeRow`, by creation: what drawing the whole
        tree needs and nothing parsed (a 10,000-node tree in a few milliseconds)."""

    @abstractmethod
    def chain_rows(self, tree_id: str) -> Iterator[ChainRow]:
        """Raw hashed fields of every node of a tree, for verification."""

    @abstractmethod
    def subtree(self, slot: str) -> list[str]:
        """Every node at or below `slot` (all versions), in one query."""

    def forget_places(self, ids: Iterable[str]) -> None:  # noqa: B027 (optional hook)
        """Drop what the store remembers of deleted nodes (nothing, unless it keeps a
        memory of node places, as SQLite's does)."""


class EdgeStore(ABC):
    """Annotation and link edges between nodes."""

    @abstractmethod
    def insert_edge(self, edge: Edge) -> None:
        """Store an edge with its sources."""

    @abstractmethod
    def edges_of(self, node_id: str) -> list[Edge]:
        """Annotation and link edges touching a node, as source or target."""
