"""Paths through the loom: which node fills each position, from root to head.

A node's created-from chain fixes the sequence of positions (slots) from the root;
versions of a slot share the slot's parent, so an edit never moves what hangs below
it. Which version fills each slot is chosen, in order of precedence, by
  1. the ref the path is read through (its selections),
  2. the selections stored on the nodes of the created-from chain, nearest to the head
     first (a node appended or edited through a view stores the versions that view
     showed where they differ from its parent's path, so its id keeps meaning the same
     path forever), and
  3. otherwise the node the chain was actually created from.
Resolution costs one query for the chain, plus one small query when versions must be
substituted: never one query per node.
"""

from __future__ import annotations

from typing import Any

from .errors import NotFound
from .store.base import FLAGS, HAS_SELECTIONS, ID, SLOT, Backend

Row = tuple[Any, ...]


def effective_selections(backend: Backend, chain: list[Row]) -> dict[str, str]:
    """The selections stored along a chain (head first), nearest to the head winning."""
    flagged = [r[ID] for r in chain if r[FLAGS] & HAS_SELECTIONS]
    if not flagged:
        return {}
    stored = backend.nodes.node_selections(flagged)
    chosen: dict[str, str] = {}
    for row in chain:
        for slot, version in stored.get(row[ID], {}).items():
            chosen.setdefault(slot, version)
    return chosen


def resolve_path(backend: Backend, head: str, selections: dict[str, str],
                 min_depth: int = 0) -> list[Row]:
    """Rows of the path ending at `head` (root first), with version selections applied;
    with `min_depth`, only its rows from that depth on. (A selection is stored on a node
    below the slot it chooses for, so the end of a path is resolved by the end of its
    chain alone.)"""
    chain = backend.nodes.walk(head, min_depth)
    if not chain:
        raise NotFound("node", head)
    chosen = {**effective_selections(backend, chain), **selections}
    if not chosen:
        chain.reverse()
        return chain
    rows = {r[ID]: r for r in chain}
    wanted = [chosen[r[SLOT]] for r in chain if chosen.get(r[SLOT], r[ID]) not in rows]
    if wanted:
        fetched = backend.nodes.path_rows(wanted)
        for vid in wanted:
            if vid not in fetched:
                raise NotFound("selected version", vid)
        rows.update(fetched)
    path = [rows[chosen.get(r[SLOT], r[ID])] for r in chain]
    path.reverse()
    return path


def selection_delta(backend: Backend, parent: str | None, wanted: dict[str, str]) -> dict[str, str]:
    """The part of `wanted` a new node under `parent` must store: selections for slots on
    the parent's path that the parent's path does not already resolve that way."""
    if not wanted or parent is None:
        return {}
    chain = backend.nodes.walk(parent)
    current = {r[SLOT]: r[ID] for r in chain}
    current.update({s: v for s, v in effective_selections(backend, chain).items() if s in current})
    return {s: v for s, v in wanted.items() if s in current and current[s] != v}
