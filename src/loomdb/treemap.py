"""The tree map's data: a whole tree in one compact shape, as the caller sees it.

The web page draws every node of a tree at once (10,000 and more) and lays it out
itself, so what it fetches is one read of the store and small: `tree_shape` reads no
content whole, only the head of each stored body, from which a short preview is cut
here without parsing the JSON; the answer is columnar (parallel arrays indexed by row)
and names a node's parent and slot by row number, not by its 26-character id. A
10,000-node tree answers in well under 100 ms on either backend
(`benchmarks/bench_web.py`).

Rows are nodes in creation order, versions included: a row whose `slot` is its own
index is an original (a place in the tree the map draws); any other row is an edited
version of the row its `slot` names. A row's `parent` is the row it was written
after (the exact version), so following parents gives a node's path, and the slots
of that path are the places it passes through.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .errors import InvalidInput, TooLarge
from .storage_ops import storage
from .users import Access

#: the most nodes a map is drawn for (the answer holds each one)
MAX_NODES = 200_000
#: characters of a node's text in its preview
PREVIEW = 80
#: the kinds of refs, in the order the map lists them
REF_KINDS = ("session", "view", "bookmark")

_KEY = '"text":"'
#: a JSON string's inside (escapes included), up to its closing quote or the cut
_STRING = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*')
_TYPE = re.compile(r'"type":"([a-z_]+)"')
_CUT_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{0,3})?$")
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f]+")


def tree_map(who: Access, name: str, at: str | None = None) -> dict[str, Any]:
    """The whole of the tree `name` (an id, prefix or any headish inside it) for the
    caller: `{"tree", "nodes": {"id", "parent", "slot", "role", "kind", "text"},
    "refs": {kind: [{"name", "node"}]}, "current", "pruned", "excluded"}`, every node
    named by its row. `current` is the row of the node whose path the map shows: `at`
    (a headish in this tree), else the newest session's head, else the newest node."""
    tree = who.tree(name)
    if tree.nodes > MAX_NODES:
        raise TooLarge("tree", f"{tree.nodes} nodes is over the map's limit of {MAX_NODES}")
    loom = who.loom
    store = storage(loom)
    rows = store.tree_shape(tree.id)
    index = {r[0]: i for i, r in enumerate(rows)}
    nodes = {"id": [r[0] for r in rows],
             "parent": [-1 if r[1] is None else index.get(r[1], -1) for r in rows],
             "slot": [index.get(r[2], i) for i, r in enumerate(rows)],
             "role": [r[4] for r in rows], "kind": [r[5] for r in rows],
             "text": [preview(r[6]) for r in rows]}
    refs: dict[str, list[dict[str, Any]]] = {k: [] for k in REF_KINDS}
    newest: tuple[str, int] | None = None
    for ref in who.refs(tree=tree.id):
        row = index.get(ref.node)
        if row is None:
            continue
        refs.setdefault(ref.kind, []).append({"name": ref.name, "node": row})
        if ref.kind == "session" and (newest is None or ref.updated_at > newest[0]):
            newest = (ref.updated_at, row)
    current: int | None = len(rows) - 1 if rows else None
    if at is not None:
        current = _row_of(who, at, tree.id, index)
    elif newest is not None:
        current = newest[1]
    flags = {f: sorted(index[n] for n in store.flagged(tree.id, f) if n in index)
             for f in ("pruned", "excluded")}
    return {"tree": tree.to_json(), "nodes": nodes, "refs": refs, "current": current,
            **flags}


def tree_map_json(who: Access, name: str, at: str | None = None) -> bytes:
    """`tree_map` as compact JSON bytes (what the HTTP route sends as is)."""
    return json.dumps(tree_map(who, name, at), ensure_ascii=False,
                      separators=(",", ":")).encode("utf-8")


def _row_of(who: Access, at: str, tree_id: str, index: dict[str, int]) -> int:
    pos = who.position(at)
    if pos.tree != tree_id or pos.node not in index:
        raise InvalidInput("at", f"{at!r} is not in this tree")
    return index[pos.node]


def preview(head: str | bytes | None) -> str:
    """The first words of a node's text from the head of its stored content (canonical
    JSON, cut anywhere): the first text found, unescaped, or the first block's type in
    brackets (`[image]`), or "" when the content is gone. Read with `str.find` and one
    anchored match over a few hundred characters: it runs for every node of a map."""
    if head is None:
        return ""
    if isinstance(head, bytes):
        head = head.decode("utf-8", "ignore")
    start = head.find(_KEY)
    if start < 0:
        kind = _TYPE.search(head)
        return f"[{kind.group(1)}]" if kind else ""
    start += len(_KEY)
    found = _STRING.match(head, start, start + 3 * PREVIEW)
    raw = found.group(0) if found else ""
    value = raw
    if "\\" in raw:
        try:
            value = json.loads(f'"{raw}"')
        except ValueError:  # cut inside an escape
            try:
                value = json.loads(f'"{_CUT_ESCAPE.sub("", raw)}"')
            except ValueError:
                pass
    if not value.isprintable():
        value = _UNPRINTABLE.sub(" ", value)
    words = " ".join(value.split())
    return words if len(words) <= PREVIEW else words[: PREVIEW - 1].rstrip() + "…"
