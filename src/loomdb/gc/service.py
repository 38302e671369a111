"""Garbage collection (seed 000, open question 4: when is content orphaned?).

Core contents are never garbage: a content lives with the nodes that hold it, and nodes
are immutable. What can become garbage is

* a document body (`doc_contents`) that no revision uses any more, once its document is
  deleted, and that no reference or collection item names (`sha256:...`);
* a blob that no node, revision body, reference or item uses (put but never attached,
  or attached only to deleted documents).

gc owns no tables: it asks the documents area for its bodies (`documents.service`)
and every area for the keys it holds (`loomdb.hooks.held_keys`: collection items,
links).

Mark and sweep, with a grace period: nothing created less than `grace` ago is touched,
so a writer that put a blob and has not yet written the node using it keeps it. Each
delete re-checks its condition in the statement itself (`created_at < cutoff AND no
revision uses it`), and a revision re-using an old body refreshes that body's time, so
a concurrent commit and a collection never both win.

Blobs the same way: a blob's time is its last use (putting the same bytes again, or
naming the blob in new content, moves it forward: `store/blobmeta.py`), and the sweep
deletes in one transaction per batch, in which it first checks again that no stored
content, document body, collection item or link names the blob, then deletes its
record (only when still older than the cutoff) and its bytes. A writer putting or
naming the blob meanwhile waits on that record and then finds it gone (a put stores it
again; naming it is refused), or moved it first, and the blob stays.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from .. import content as C
from .. import hooks
from ..documents import DOCUMENTS
from ..documents import service as documents
from ..errors import InvalidInput
from ..model import iso
from ..storage_ops import storage

if TYPE_CHECKING:
    from ..loom import Loom

DEFAULT_GRACE = timedelta(hours=1)
#: the longest grace period (a hundred years: "keep everything" without overflowing)
MAX_GRACE = timedelta(days=36500)


def collect(loom: Loom, *, dry_run: bool = False,
            grace: timedelta = DEFAULT_GRACE) -> dict[str, int]:
    """Delete (or with `dry_run`, count) unreachable contents and blobs:
    `{"contents", "blobs", "bytes"}`."""
    if not timedelta(0) <= grace <= MAX_GRACE:
        raise InvalidInput("grace", f"must be from 0 to {MAX_GRACE.days} days, got {grace}")
    cutoff = iso(datetime.now(UTC) - grace)
    held = hooks.held_keys(loom)
    garbage, freed = _contents(loom, cutoff, held, dry_run)
    blobs, blob_bytes = _blobs(loom, cutoff, held, dry_run, garbage)
    return {"contents": len(garbage), "blobs": blobs, "bytes": freed + blob_bytes}


def _contents(loom: Loom, cutoff: str, held: set[str], dry_run: bool) -> tuple[set[str], int]:
    """(ids of the bodies collected, or that would be with `dry_run`; their bytes)."""
    gone: set[str] = set()
    size = 0
    if not loom.has_area(DOCUMENTS):
        return gone, size
    with storage(loom).transaction():
        for cid, body in documents.unused_bodies(loom, cutoff):
            if cid in held:
                continue
            if not dry_run and not documents.drop_unused_body(loom, cid, cutoff):
                continue
            gone.add(cid)
            size += len(body.encode("utf-8"))
    return gone, size


def _blobs(loom: Loom, cutoff: str, held: set[str], dry_run: bool,
           dropped: set[str]) -> tuple[int, int]:
    candidates = [(bid, n) for bid, n, at in loom.blob_list() if at < cutoff and bid not in held]
    if not candidates:
        return 0, 0
    used = _used_blobs(loom, dropped)
    doomed = [(bid, n) for bid, n in candidates if bid not in used]
    if dry_run:
        return len(doomed), sum(n for _, n in doomed)
    count = size = 0
    for start in range(0, len(doomed), _BATCH):
        gone = _sweep(loom, dict(doomed[start:start + _BATCH]), cutoff)
        count += len(gone)
        size += sum(gone.values())
    return count, size


_BATCH = 1000


def _sweep(loom: Loom, batch: dict[str, int], cutoff: str) -> dict[str, int]:
    """Delete the blobs of `batch` that nothing names now, in one transaction: the
    check and the deletes see the same store (see the module docstring)."""
    with storage(loom).transaction():
        named = storage(loom).blobs_named(list(batch)) | hooks.held_keys(loom)
        if loom.has_area(DOCUMENTS):
            for body in documents.blob_texts(loom):
                named.update(bid for bid in batch if bid in body)
        return {bid: n for bid, n in batch.items()
                if bid not in named and loom.delete_blob(bid, cutoff)}


def _used_blobs(loom: Loom, dropped: set[str]) -> set[str]:
    """Every blob a node or a kept document body points at (one pass over the store)."""
    used: set[str] = set()
    for tree in [*loom.trees(), *loom.trees(archived=True)]:
        for node in loom.tree_nodes(tree.id):
            used.update(C.blob_refs(node.content))
    for blocks in _document_bodies(loom, dropped):
        used.update(C.blob_refs(blocks))
    return used


def _document_bodies(loom: Loom, dropped: set[str]) -> list[list[dict[str, Any]]]:
    if not loom.has_area(DOCUMENTS):
        return []
    return documents.bodies_kept(loom, dropped)
