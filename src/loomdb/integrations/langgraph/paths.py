"""A message channel's values as paths of the thread's tree.

A value (a list of messages) is stored as the node at its tip: the path from the
tree's root to that node is the list. Storing the list of a new checkpoint finds the
longest prefix it shares with its parent checkpoint's list and writes only what
follows, as children of the last shared node: the step that adds one message writes
one node, and a list that changes an earlier message (an update of an old
checkpoint, a message replaced or removed) continues from where the two part, a
branch of the same tree (a fork: nothing is copied). A message equal to a child
already there is that child, so running the same step twice writes nothing twice.

Lists are remembered by tip for the last few checkpoints (the message objects
LangGraph holds, so the common prefix of the next step is found by identity); a tip
not remembered is read from the tree once. The longest path read or written last is
also indexed by node: the list at any node on it is a prefix of it (a node has one
path), so reading a thread's history newest first reads the tree once, not once per
checkpoint.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage
from langgraph.checkpoint.serde.base import SerializerProtocol

from ...model import Node
from ...store.areas import Unit
from ...store.nodes import BODY, ID, ROLE
from . import storage
from .area import LANGGRAPH
from .messages import decode, encode

if TYPE_CHECKING:
    from ...api import Loom

Path = tuple[tuple[str, ...], tuple[BaseMessage, ...]]
_EMPTY: Path = ((), ())


@dataclass
class Thread:
    """A thread as a put sees it: its key in the area and its tree (None before its
    first message)."""

    key: int
    thread_id: str
    tree: str | None


class Paths:
    """Message lists in and out of a thread's tree (see the module docstring)."""

    def __init__(self, loom: Loom, serde: SerializerProtocol, remembered: int = 64) -> None:
        self.loom = loom
        self.serde = serde
        self._known: OrderedDict[str, Path] = OrderedDict()
        self._fresh: set[str] = set()  # nodes written here that nothing continues yet
        self._size = remembered
        self._along: Path = _EMPTY  # the path indexed by node (see the module docstring)
        self._at: dict[str, int] = {}
        self._lock = threading.Lock()

    # -- reading ------------------------------------------------------------------------
    def messages(self, tip: str | None) -> list[BaseMessage]:
        """The list a tip stands for."""
        return list(self.path(tip)[1])

    def path(self, tip: str | None) -> Path:
        """(node ids, messages) from the root to `tip`."""
        if tip is None:
            return _EMPTY
        known = self._known.get(tip)
        if known is not None:
            return known
        along, at = self._along, self._at
        if tip in at:
            i = at[tip] + 1
            return (along[0][:i], along[1][:i])
        rows = self.loom.path_rows(tip)
        ids = tuple(str(r[ID]) for r in rows)
        with self.loom.unit(LANGGRAPH) as db:
            fields = storage.messages(db, ids)
        found: Path = (ids, tuple(decode(r[ROLE], json.loads(r[BODY]), fields.get(r[ID]),
                                         self.serde) for r in rows))
        self._remember(tip, found)
        self._index(found)
        return found

    def _index(self, path: Path, extends: bool = False) -> None:
        """Index `path` by node (`extends`: it continues the indexed one)."""
        with self._lock:
            if extends:
                start = len(self._along[0])
                self._at.update((node, start + i) for i, node in enumerate(path[0][start:]))
            else:
                self._at = {node: i for i, node in enumerate(path[0])}
            self._along = path

    def by_id(self, ids: Sequence[str]) -> dict[str, BaseMessage]:
        """The messages of these nodes (those that exist)."""
        nodes = self.loom.nodes(ids)
        with self.loom.unit(LANGGRAPH) as db:
            fields = storage.messages(db, [n.id for n in nodes])
        return {n.id: decode(n.role, n.content, fields.get(n.id), self.serde) for n in nodes}

    def _remember(self, tip: str, path: Path) -> None:
        with self._lock:
            self._known[tip] = path
            self._known.move_to_end(tip)
            while len(self._known) > self._size:
                self._known.popitem(last=False)

    # -- writing ------------------------------------------------------------------------
    def store(self, db: Unit, thread: Thread, messages: Sequence[BaseMessage],
              base: str | None, added: list[tuple[str, BaseMessage]]) -> tuple[str | None, int]:
        """(tip, length) of `messages`, written after what it shares with the list at
        `base` (inside the caller's unit); the (node, message) pairs past the shared
        part are put in `added`."""
        ids, old = self.path(base)
        new = tuple(messages)
        shared = _shared(new, old)
        if shared == len(new):
            tip = ids[shared - 1] if shared else None
            if tip is not None and shared != len(old):
                self._remember(tip, (ids[:shared], new))
            return tip, shared
        path = list(ids[:shared])
        parent: Node | None = None
        for m in new[shared:]:
            above = path[-1] if path else None
            node = self._child(db, thread, above, m)
            if node is None:
                if above is not None and parent is None:
                    parent = self.loom.node(above)
                node = self._write(db, thread, parent, m)
                with self._lock:
                    self._fresh.discard(above or "")
                    self._fresh.add(node.id)
            parent = node
            path.append(node.id)
            added.append((node.id, m))
        tip = path[-1]
        made: Path = (tuple(path), new)
        self._remember(tip, made)
        along = self._along[0]
        if not along or (shared == len(along) and ids[:shared] == along):
            self._index(made, extends=bool(along))
        return tip, len(new)

    def _child(self, db: Unit, thread: Thread, above: str | None, m: BaseMessage
               ) -> Node | None:
        """The node under `above` (a version of the root for None) that already is `m`."""
        if thread.tree is None or (above is not None and above in self._fresh):
            return None
        if above is None:
            root = self.loom.tree(thread.tree).root
            ids = self.loom.versions(root) if root else []
        else:
            ids = self.loom.children(above)
        nodes = self.loom.nodes(ids)
        fields = storage.messages(db, [n.id for n in nodes])
        for node in nodes:  # a message of this area (a node written by hand has no fields)
            if node.id in fields and decode(node.role, node.content, fields[node.id],
                                            self.serde) == m:
                return node
        return None

    def _write(self, db: Unit, thread: Thread, parent: Node | None, m: BaseMessage) -> Node:
        e = encode(m, self.serde)
        if thread.tree is None:
            tree, node = self.loom.new_tree(
                e.blocks, role=e.role, source=e.source,
                lineage={"langgraph": {"thread_id": thread.thread_id}})
            storage.set_tree(db, thread.key, tree.id)
            storage.put_message(db, node.id, e.fields)
            thread.tree = tree.id
            return node
        blocks = self.loom.prepare(e.blocks)
        edited: Node | None = None
        if parent is None:  # another first message: a version of the root
            root = self.loom.tree(thread.tree).root
            edited = self.loom.node(root) if root else None
        node = self.loom.write_node(
            tree=thread.tree, parent=parent, blocks=blocks, role=e.role, author=None,
            source=e.source, options=None, cache=False, kind="message", created_at=None,
            origin=None, edited_from=edited)
        storage.put_message(db, node.id, e.fields)
        return node

    def forget(self) -> None:
        """Drop what is remembered (after a delete)."""
        with self._lock:
            self._known.clear()
            self._fresh.clear()


def _shared(new: tuple[Any, ...], old: tuple[Any, ...]) -> int:
    """How many messages the two lists share from the start (by identity first: the
    objects LangGraph carries from step to step are the ones stored)."""
    n = min(len(new), len(old))
    if new[:n] == old[:n]:
        return n
    for i in range(n):
        a, b = new[i], old[i]
        if a is not b and (type(a) is not type(b) or a != b):
            return i
    return n
