"""Paths through the loom: which node fills each position, from root to head.

A node's created-from chain fixes the sequence of positions (slots) from the root;
versions of a slot share the slot's parent, so an edit never moves what hangs below
it. Which version fills each slot is chosen, in order of precedence, by
  1. the ref the path is read through (its selections),
  2. the selections stored on the nodes of the path, nearest to the head first
     (a node appended through a view remembers the versions that view showed), and
  3. otherwise the node the chain was actually created from.
Resolution costs one recursive query for the chain, plus one small query per round
of substituted versions (usually none, at most a few): never one query per node.
"""

from __future__ import annotations

from typing import Any

from .errors import NotFound
from .store.base import FLAGS, HAS_SELECTIONS, ID, SLOT, Backend

Row = tuple[Any, ...]


def resolve_path(backend: Backend, head: str, selections: dict[str, str]) -> list[Row]:
    """Rows of the path ending at `head` (root first), with version selections applied."""
    chain = backend.walk(head)
    if not chain:
        raise NotFound("node", head)
    stored = _stored_selections(backend, chain)
    if not selections and not stored:
        chain.reverse()
        return chain
    rows = {r[ID]: r for r in chain}
    _fetch_versions(backend, rows, stored, selections)
    chosen = dict(selections)
    path: list[Row] = []
    for row in chain:
        pick = rows[chosen.get(row[SLOT], row[ID])]
        for slot, version in stored.get(pick[ID], {}).items():
            chosen.setdefault(slot, version)
        path.append(pick)
    path.reverse()
    return path


def _stored_selections(backend: Backend, rows: list[Row]) -> dict[str, dict[str, str]]:
    flagged = [r[ID] for r in rows if r[FLAGS] & HAS_SELECTIONS]
    return backend.node_selections(flagged) if flagged else {}


def _fetch_versions(
    backend: Backend,
    rows: dict[str, Row],
    stored: dict[str, dict[str, str]],
    selections: dict[str, str],
) -> None:
    """Load every version any selection could pick, until nothing new appears."""
    wanted = set(selections.values())
    while True:
        wanted |= {v for sel in stored.values() for v in sel.values()}
        missing = [v for v in wanted if v not in rows]
        if not missing:
            return
        fetched = backend.path_rows(missing)
        for vid in missing:
            if vid not in fetched:
                raise NotFound("selected version", vid)
        rows.update(fetched)
        stored.update(_stored_selections(backend, list(fetched.values())))
