"""The thread a page draws, one page at a time (`Door.nodes.thread`).

A long conversation is read from its end: the page holds the last `limit` messages
before `before` (a node on the path; none: the head), and says whether older ones are
left (`has_more`). Only the end of the path is walked, from the head down to the page
(a version selection is stored below the slot it chooses for, so the end of the chain
resolves the end of the path), and only the messages of the page are read in full,
with their overlays, the branches beside them and the versions of their slots: the
last page of a 5,000-message thread costs what a page of a short one does."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..agents.subagents import spawned_at
from ..errors import InvalidInput, NotFound
from ..model import Meta
from ..storage_ops import storage
from ..store.base import ID, SLOT

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from ..headish import Position
    from ..loom import Loom

#: messages in a page when none is asked for (a screen or two), and the most one holds
PAGE = 100
MAX_PAGE = 500
_BARE = Meta()


def check_limit(limit: int) -> int:
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_PAGE:
        raise InvalidInput("limit", f"a page holds 1 to {MAX_PAGE} messages, not {limit!r}")
    return limit


def page(lm: Loom, pos: Position, before: str | None, limit: int,
         visible: Callable[[Iterable[str]], set[str]]) -> dict[str, Any]:
    """The page of the path to `pos` ending just before `before` (see the module); a
    message a subagent was spawned from lists it (`subagents`: tree, session, task, the
    node its report came back as) when `visible` (the caller's trees) holds its tree."""
    check_limit(limit)
    st = storage(lm)
    head = st.anchor(pos.node)
    if head is None:
        raise NotFound("node", pos.node)
    total = end = head.depth + 1
    if before is not None:
        mark = st.anchor(before)
        if mark is None or mark.tree != pos.tree or mark.depth >= total:
            raise _off_path(before)
        end = mark.depth
    start = max(0, end - limit)
    low = max(0, start - 1)  # the message before the page: its slot holds the first's siblings
    rows = st.path_end(pos, low)
    if before is not None and rows[end - low][ID] != before:
        raise _off_path(before)
    ids = [r[ID] for r in rows[start - low:end - low]]
    nodes, metas = st.nodes_by_id(ids), st.metas(ids)
    parents = [r[SLOT] for r in rows[max(0, start - 1) - low:end - 1 - low]]
    children = st.children_of(parents, pos.tree)
    versions = st.versions_of([r[SLOT] for r in rows[start - low:end - low]], pos.tree)
    spawned = spawned_at(lm, ids)
    seen = visible({c.tree for found in spawned.values() for c in found})
    out = []
    for k, node_id in enumerate(ids):
        node, i = nodes[node_id], start + k
        branches = children[rows[i - 1 - low][SLOT]] if i else [node.slot]
        message = {**node.to_json(), "index": i, "meta": metas.get(node.id, _BARE).to_json(),
                   "branches": sorted(branches), "versions": versions[node.slot],
                   "has_logprobs": bool((node.provenance or {}).get("logprobs"))}
        if node.id in spawned:
            message["subagents"] = [c.to_json() for c in spawned[node.id] if c.tree in seen]
        if node.kind == "compaction":
            found = st.compaction(node.id)
            message["compaction"] = None if found is None else dict(found)
        out.append(message)
    return {"head": pos.node, "ref": pos.ref.to_json() if pos.ref else None,
            "total": total, "start": start, "has_more": start > 0, "messages": out}


def _off_path(before: str) -> InvalidInput:
    return InvalidInput("before", f"{before[:80]!r} is not a message on this path")
