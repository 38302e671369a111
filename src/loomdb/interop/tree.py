"""Checking and ordering the parent links of one conversation, whatever its source.

Every format ends up as messages that name their parent. Before a conversation is
handed over it must be a forest: ids unique, every parent present, no cycles; and
the messages are put in topological order (parents first), keeping the source's
sibling order so that "child 0" stays first. Failures raise `InvalidInput` (or
`CycleError`) naming the ids involved; parsers turn them into a `ParseError` for
that conversation only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime

from ..errors import CycleError, InvalidInput
from .model import ImportedMessage

_SHOWN = 5


def check_unique(ids: Iterable[str], where: str) -> None:
    dupes = [i for i, n in Counter(ids).items() if n > 1]
    if dupes:
        raise InvalidInput(where, f"duplicate message ids: {_names(dupes)}")


def find_cycle(parents: Mapping[str, str | None]) -> list[str] | None:
    """A cycle in the parent links (as a list of ids), or None."""
    state: dict[str, int] = {}  # 1 = on the current walk, 2 = known to reach a root
    for start in parents:
        walk: list[str] = []
        node: str | None = start
        while node is not None and node in parents and state.get(node) != 2:
            if state.get(node) == 1:
                return walk[walk.index(node) :] + [node]
            state[node] = 1
            walk.append(node)
            node = parents[node]
        for done in walk:
            state[done] = 2
    return None


def check_links(parents: Mapping[str, str | None], where: str) -> None:
    """Every parent exists and the links hold no cycle."""
    dangling = [f"{c} -> {p}" for c, p in parents.items() if p is not None and p not in parents]
    if dangling:
        raise InvalidInput(where, f"parent ids not in the conversation: {_names(dangling)}")
    cycle = find_cycle(parents)
    if cycle:
        raise CycleError(where, "parent links form a cycle: " + " -> ".join(cycle))


def order(
    messages: Sequence[ImportedMessage],
    where: str,
    sibling_rank: Mapping[str, int] | None = None,
) -> list[ImportedMessage]:
    """Validate and return the messages parents-first (depth first, siblings in order).

    Siblings are ordered by `sibling_rank` where given (e.g. the position in ChatGPT's
    `children` lists), then by their order in `messages`.
    """
    check_unique((m.source_id for m in messages), where)
    by_id = {m.source_id: m for m in messages}
    check_links({m.source_id: m.parent_source_id for m in messages}, where)
    kids: dict[str | None, list[str]] = {}
    for m in messages:
        kids.setdefault(m.parent_source_id, []).append(m.source_id)
    if sibling_rank:
        last = len(sibling_rank)
        for listed in kids.values():
            listed.sort(key=lambda cid: sibling_rank.get(cid, last))
    result: list[ImportedMessage] = []
    stack = list(reversed(kids.get(None, [])))
    while stack:
        node = stack.pop()
        result.append(by_id[node])
        stack.extend(reversed(kids.get(node, [])))
    return result


def preorder_rank(children: Mapping[str, Sequence[str]], roots: Sequence[str]) -> dict[str, int]:
    """Position of each id in a depth-first walk of `children` lists from `roots`."""
    rank: dict[str, int] = {}
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        if node in rank:
            continue
        rank[node] = len(rank)
        stack.extend(reversed([c for c in children.get(node, ()) if c not in rank]))
    return rank


def leaves(messages: Sequence[ImportedMessage]) -> list[ImportedMessage]:
    parents = {m.parent_source_id for m in messages}
    return [m for m in messages if m.source_id not in parents]


def newest_leaf(messages: Sequence[ImportedMessage]) -> str | None:
    """The leaf created last (the last one in order when times are missing or tie)."""
    floor = datetime.min.replace(tzinfo=UTC)
    best: ImportedMessage | None = None
    for leaf in leaves(messages):
        if best is None or (leaf.created_at or floor) >= (best.created_at or floor):
            best = leaf
    return best.source_id if best else None


def _names(items: Sequence[str]) -> str:
    shown = ", ".join(items[:_SHOWN])
    return shown + (f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else "")
