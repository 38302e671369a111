"""Matching a request's messages to a path in the store, incrementally.

Chat clients re-send the whole history on every call. Matching it node by node would
read and hash the whole path each time; instead the gateway keeps a memo (its own
area, table `gateway_paths`) from the *running digest* of a request's messages up to
message i -> the node holding message i on a path with exactly those contents (and
the version selections that path needs, when it runs through an edited slot).

    D[i] = sha256(key 0 + key 1 + ... + key i)

(`key` from `messages.key_of`: role letter, length and text, no JSON). The usual request is a known
history plus one new message, so the first look-up asks for D[n-2] and D[n-1] at once:
one indexed query, and the cost is one pass of sha256 over the request's text (linear,
under a microsecond per message plus sha256's throughput, see benchmarks/bench_gateway.py).
Only when neither is known are all prefixes digested and the longest known one found
by binary search (every path the gateway writes is memoized from its root, so known
prefixes are prefix-closed). A hit is verified cheaply: the node exists, in the
tree, at the depth the memo wrote (the digest itself names the prefix's length: keys are
self-delimiting). A node's depth is its message's index in the request, except past a
client's compaction (`compacted.py`), where the summary stands for the turns before it.

The memo is written in the same transaction as the nodes it names, so it never points
at a node that was rolled back.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..storage_ops import storage
from ..store.areas import Area

if TYPE_CHECKING:
    from ..loom import Loom
    from ..store.areas import Unit

GATEWAY = Area("gateway", "loomdb.exchanges", hooks="loomdb.exchanges.forgetting:HOOKS")
_INSERT = ("INSERT INTO gateway_paths (digest, tree_id, node_id, depth, selections) "
           "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")


@dataclass
class Hit:
    """The longest known prefix: message `index` is node `node` (seen through `selections`)."""

    index: int
    node: str
    tree: str
    selections: dict[str, str] = field(default_factory=dict)
    #: the node's depth less `index` (non-zero past a client's compaction)
    offset: int = 0


class Digests:
    """Running prefix digests of a list of message keys, computed only where asked.

    D[i] is sha256 of keys 0..i concatenated (keys are self-delimiting), as UTF-8; runs
    of keys between the wanted indexes are hashed with one call each."""

    def __init__(self, keys: Sequence[str] | Callable[[], Sequence[str]]) -> None:
        self._keys = keys  # or what makes them, called when first needed
        self._known: dict[int, str] = {}
        self._final: Any = None  # the sha256 state after every key

    @property
    def keys(self) -> Sequence[str]:
        if callable(self._keys):
            self._keys = self._keys()
        return self._keys

    def at(self, wanted: Iterable[int]) -> dict[int, str]:
        """D[i] for each i in `wanted`, in one pass over the keys when any is new."""
        want = set(wanted)
        if not want <= self._known.keys():
            h, done = hashlib.sha256(), 0
            for i in sorted(want | {len(self.keys) - 1}):
                h.update(_utf8("".join(self.keys[done:i + 1])))
                self._known[i], done = h.hexdigest(), i + 1
            self._final = h
        return {i: self._known[i] for i in want}

    def every(self) -> list[str]:
        self.at(range(len(self.keys)))
        return [self._known[i] for i in range(len(self.keys))]

    def extended(self, extra: str) -> str:
        """D of all keys plus one more (an answer about to be written)."""
        if self._final is None:
            self.at([len(self.keys) - 1])
        h = self._final.copy()
        h.update(_utf8(extra))
        return str(h.hexdigest())


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput("messages", "text is not valid Unicode (a lone surrogate)") from None


def last_two(n: int) -> list[int]:
    """The prefixes `find` looks for first, of a request of `n` messages: all of it (a
    re-ask) and all but its last message (a continuation)."""
    return [i for i in (n - 1, n - 2) if i >= 0]


def find(db: Unit, loom: Loom, digests: Digests, tree: str | None) -> Hit | None:
    """The longest prefix of the request on a known path (in `tree` when given)."""
    n = len(digests.keys)
    hit = _best(db, loom, digests.at(last_two(n)), tree)
    if hit is not None or n <= 2:
        return hit
    every = digests.every()
    lo, hi, best = 0, n - 3, None
    while lo <= hi:  # known prefixes are prefix-closed: the largest known index
        mid = (lo + hi) // 2
        found = _best(db, loom, {mid: every[mid]}, tree)
        if found is not None:
            best, lo = found, mid + 1
        else:
            hi = mid - 1
    return best


def _best(db: Unit, loom: Loom, digests: dict[int, str], tree: str | None) -> Hit | None:
    by_digest = {d: i for i, d in digests.items()}
    marks = ",".join("?" * len(by_digest))
    sql = ("SELECT digest, tree_id, node_id, depth, selections FROM gateway_paths"
           f" WHERE digest IN ({marks})")
    args: list[Any] = list(by_digest)
    if tree is not None:
        sql += " AND tree_id = ?"
        args.append(tree)
    rows = sorted(db.execute(sql, args), key=lambda r: (by_digest[r[0]], r[2]), reverse=True)
    for digest, tree_id, node_id, depth, selections in rows:
        index = by_digest[digest]
        anchor = storage(loom).anchor(node_id)
        if anchor is None or anchor.tree != tree_id or anchor.depth != depth:
            continue  # verified cheaply: a stale or foreign entry is never trusted
        return Hit(index, node_id, tree_id, json.loads(selections) if selections else {},
                   depth - index)
    return None


def remember(db: Unit, digest: str, tree: str, node: str, depth: int,
             selections: dict[str, str] | None) -> None:
    """Memoize one prefix (first writer wins: equal prefixes in a tree name one path)."""
    db.execute(_INSERT, (digest, tree, node, depth,
                         json.dumps(selections, sort_keys=True) if selections else None))
