"""Garbage collection (seed 000, open question 4: when is content orphaned?).

Core contents are never garbage: a content lives with the nodes that hold it, and nodes
are immutable. What can become garbage is

* a document body (`doc_contents`) that no revision uses any more, once its document is
  deleted, and that no reference or collection item names (`sha256:...`);
* a blob that no node, revision body, reference or item uses (put but never attached,
  or attached only to deleted documents).

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
from ..errors import InvalidInput
from ..model import iso

if TYPE_CHECKING:
    from ..loom import Loom

DEFAULT_GRACE = timedelta(hours=1)
#: the longest grace period (a hundred years: "keep everything" without overflowing)
MAX_GRACE = timedelta(days=36500)
_UNUSED = ("FROM doc_contents c WHERE c.created_at < ? AND NOT EXISTS "
           "(SELECT 1 FROM doc_revisions r WHERE r.content_id = c.id)")


def collect(loom: Loom, *, dry_run: bool = False,
            grace: timedelta = DEFAULT_GRACE) -> dict[str, int]:
    """Delete (or with `dry_run`, count) unreachable contents and blobs:
    `{"contents", "blobs", "bytes"}`."""
    if not timedelta(0) <= grace <= MAX_GRACE:
        raise InvalidInput("grace", f"must be from 0 to {MAX_GRACE.days} days, got {grace}")
    cutoff = iso(datetime.now(UTC) - grace)
    held = _held_keys(loom)
    garbage, freed = _contents(loom, cutoff, held, dry_run)
    blobs, blob_bytes = _blobs(loom, cutoff, held, dry_run, garbage)
    return {"contents": len(garbage), "blobs": blobs, "bytes": freed + blob_bytes}


def _held_keys(loom: Loom) -> set[str]:
    from ..collections import COLLECTIONS
    from ..collections import storage as KS
    from ..references import service as R

    with loom.unit(COLLECTIONS) as db:
        keys = set(KS.entity_keys(db))
    return keys | set(R.link_keys(loom))


def _contents(loom: Loom, cutoff: str, held: set[str], dry_run: bool) -> tuple[set[str], int]:
    """(ids of the bodies collected, or that would be with `dry_run`; their bytes)."""
    from ..documents import DOCUMENTS

    gone: set[str] = set()
    size = 0
    with loom.unit(DOCUMENTS) as db:
        for cid, body in db.execute(f"SELECT c.id, c.body {_UNUSED}", (cutoff,)):
            if cid in held:
                continue
            if not dry_run and not db.execute(
                    f"DELETE FROM doc_contents WHERE id IN (SELECT c.id {_UNUSED} AND c.id = ?) "
                    "RETURNING id", (cutoff, cid)):
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
    from ..documents import DOCUMENTS

    with loom.unit(DOCUMENTS) as db:
        named = loom.blobs_named(list(batch)) | _held_keys(loom)
        for (body,) in db.execute("SELECT body FROM doc_contents WHERE body LIKE ?",
                                  ("%sha256:%",)):
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
    import json

    from ..documents import DOCUMENTS

    with loom.unit(DOCUMENTS) as db:
        bodies = [json.loads(b) for cid, b in db.execute("SELECT id, body FROM doc_contents")
                  if cid not in dropped]
        shared = [r[0] for r in db.execute(
            "SELECT DISTINCT r.content_id FROM doc_revisions r WHERE NOT EXISTS "
            "(SELECT 1 FROM doc_contents c WHERE c.id = r.content_id)")]
    return bodies + [b for cid in shared if (b := loom.content_body(cid)) is not None]
