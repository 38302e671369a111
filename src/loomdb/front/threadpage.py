"""The thread a page draws, one page at a time (`Door.nodes.thread`).

A long conversation is read from its end: the page holds the last `limit` messages
before `before` (a node on the path; none: the head), and says whether older ones are
left (`has_more`). The path itself is one walk (ids, slots and roles, as context
assembly reads it); only the messages of the page are then read in full, with their
overlays, the branches beside them and the versions of their slots, so a page of a
5,000-message thread costs what a page of a short one does."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..model import Meta
from ..store.base import ID, SLOT
from ..storage_ops import storage

if TYPE_CHECKING:
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


def page(lm: Loom, pos: Position, before: str | None, limit: int) -> dict[str, Any]:
    """The page of the path to `pos` ending just before `before` (see the module)."""
    check_limit(limit)
    rows = lm.path_rows(pos)
    end = len(rows)
    if before is not None:
        end = next((i for i, r in enumerate(rows) if r[ID] == before), -1)
        if end < 0:
            raise InvalidInput("before", f"{before[:80]!r} is not a message on this path")
    start = max(0, end - limit)
    st = storage(lm)
    ids = [r[ID] for r in rows[start:end]]
    nodes, metas = st.nodes_by_id(ids), st.metas(ids)
    out = []
    for i in range(start, end):
        node = nodes[rows[i][ID]]
        branches = st.slot_children(rows[i - 1][SLOT]) if i else [node.slot]
        message = {**node.to_json(), "index": i, "meta": metas.get(node.id, _BARE).to_json(),
                   "branches": sorted(branches), "versions": st.slot_versions(node.slot),
                   "has_logprobs": bool((node.provenance or {}).get("logprobs"))}
        if node.kind == "compaction":
            found = st.compaction(node.id)
            message["compaction"] = None if found is None else dict(found)
        out.append(message)
    return {"head": pos.node, "ref": pos.ref.to_json() if pos.ref else None,
            "total": len(rows), "start": start, "has_more": start > 0, "messages": out}

