"""PostgreSQL's ranked full-text index: a small tail and RUM-indexed chunks.

Where the `rum` extension is installed, migration search/0002 gives each new search
entry to `search_tail` (GIN: cheap to add to; small, so its matches are ranked by
reading them), and this module seals the tail in bulk into a table `search_chunk_N`
with a RUM index, which hands over its matches best first. Adding one entry to a RUM
index costs over a millisecond, building one ~50 us an entry: sealing every `SEAL`
entries, and merging `FANOUT` chunks of one size tier into one (a log-structured
merge), keeps the indexing an append pays a fraction of the append, and the chunks a
query visits few (at most FANOUT - 1 per tier; a million entries make three tiers).

Readers read `search_chunks` first in their transaction and hold it (ACCESS SHARE)
until they end; so do writers (the tail's triggers read it before they touch the
tail). A seal or merge builds its chunk without holding anything readers need, then
locks `search_chunks` ACCESS EXCLUSIVE only to publish: register the new chunk and
drop the merged ones, or empty the tail (TRUNCATE, under its own lock, taken second
as every writer takes it: deleted rows would otherwise stay in its GIN index, each
costing a page read, until a vacuum). So a reader sees the tail and the chunks
either before a publish or after it, never half. Entries deleted while a chunk was
built are deleted from it at the publish (the delete trigger did not know the chunk
yet); entries added meanwhile join it. One sealer at a time (an advisory lock;
others skip).
"""

from __future__ import annotations

import math
import weakref
from typing import TYPE_CHECKING

from . import SEARCH
from . import dialects as D

if TYPE_CHECKING:
    from ..loom import Loom
    from ..store.areas import Unit

#: tail entries that make a chunk
SEAL = 20_000
#: chunks of one size tier merged into one
FANOUT = 4
#: advisory lock key held while sealing or merging (one sealer at a time)
SEAL_LOCK = 7_402_113_905
#: whether a handle's store ranks from chunks (a migration decides it once)
_ranked: weakref.WeakKeyDictionary[Loom, bool] = weakref.WeakKeyDictionary()


def ranked(loom: Loom, db: Unit) -> bool:
    """Whether this store ranks from chunks (PostgreSQL with `rum`), asked once a handle."""
    if not D.storage(db).chunked:
        return False
    known = _ranked.get(loom)
    if known is None:
        known = _ranked[loom] = db.one(
            "SELECT to_regclass('search_chunks') IS NOT NULL") == (True,)
    return known


def enable(loom: Loom) -> bool:
    """Rank from chunks on a PostgreSQL store whose search area was made where the
    `rum` extension was missing (its migration then left the GIN index): runs that
    migration again; whether the store now ranks from chunks."""
    if _ranked.get(loom):
        return True
    with loom.unit(SEARCH) as db:
        if not D.storage(db).chunked:
            return False
        db.script(dict(SEARCH.scripts(db.dialect))["search/0002_rank"])
    _ranked.pop(loom, None)
    with loom.unit(SEARCH) as db:
        return ranked(loom, db)


def chunk_tables(db: Unit) -> list[str]:
    """The tables a query reads, the tail first; holds `search_chunks` (see above)."""
    return ["search_tail"] + [f"search_chunk_{i}" for (i,) in
                              db.execute("SELECT id FROM search_chunks ORDER BY id")]


def maintain(loom: Loom, seal: int | None = None) -> int:
    """Seal the tail if it holds `seal` (default SEAL) entries, then merge full tiers;
    how many chunks were built. A no-op without chunks, or while another process seals."""
    seal = seal or SEAL
    if _ranked.get(loom) is False:  # (SQLite, or no `rum`: no unit opened per search)
        return 0
    with loom.unit(SEARCH) as db:
        if not ranked(loom, db):
            return 0
        if db.one("SELECT pg_try_advisory_xact_lock(?)", (SEAL_LOCK,)) != (True,):
            return 0
        built = 0
        if db.one("SELECT count(*) FROM (SELECT 1 FROM search_tail LIMIT ?) t",
                  (seal,)) == (seal,):
            _build(db, [])
            built += 1
        while (full := _full_tier(db, seal)) is not None:
            _build(db, full)
            built += 1
        return built


def _full_tier(db: Unit, seal: int) -> list[int] | None:
    """The oldest FANOUT chunks of the first tier that has that many, if any."""
    tiers: dict[int, list[int]] = {}
    for cid, entries in db.execute("SELECT id, entries FROM search_chunks ORDER BY id"):
        tier = int(math.log(entries / seal, FANOUT)) if entries > seal else 0
        tiers.setdefault(tier, []).append(cid)
        if len(tiers[tier]) == FANOUT:
            return tiers[tier]
    return None


def _build(db: Unit, merged: list[int]) -> None:
    """One new chunk from the tail (`merged` empty) or from the chunks `merged`."""
    (cid,) = db.one("SELECT nextval('search_chunks_id_seq')") or (0,)
    table = f"search_chunk_{int(cid)}"
    sources = [f"search_chunk_{int(i)}" for i in merged] or ["search_tail"]
    db.execute(f"CREATE TABLE {table} (LIKE search_tail)")
    db.execute(f"INSERT INTO {table} " +
               " UNION ALL ".join(f"SELECT * FROM {s}" for s in sources))
    db.execute(f"CREATE INDEX {table}_rank ON {table} USING rum (tsv rum_tsvector_ops)")
    db.execute(f"CREATE INDEX {table}_seq ON {table} (seq)")
    db.execute("LOCK TABLE search_chunks IN ACCESS EXCLUSIVE MODE")
    db.execute(f"DELETE FROM {table} c WHERE NOT EXISTS "
               "(SELECT 1 FROM search_entries e WHERE e.seq = c.seq)")
    if merged:
        db.execute("DELETE FROM search_chunks WHERE id = ANY(?)", (merged,))
        for source in sources:
            db.execute(f"DROP TABLE {source}")
    else:  # the few entries added during the build join the chunk; the tail restarts
        db.execute("LOCK TABLE search_tail IN ACCESS EXCLUSIVE MODE")
        db.execute(f"INSERT INTO {table} SELECT * FROM search_tail t "
                   f"WHERE NOT EXISTS (SELECT 1 FROM {table} c WHERE c.seq = t.seq)")
        db.execute("TRUNCATE search_tail")
    (entries,) = db.one(f"SELECT count(*) FROM {table}") or (0,)
    db.execute("INSERT INTO search_chunks (id, entries) VALUES (?, ?)", (cid, entries))
    db.execute(f"ANALYZE {table}")
