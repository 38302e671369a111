"""Forgetting benchmark: deleting a 10,000-node subtree and redacting one node in a
100,000-node SQLite store (targets: 1 s and 50 ms), and `redact --text` of a string
copied into one node in a hundred (target: 5 s), beside raw sqlite3 doing the same
deletes and the same updates on a plain (id, parent_id, content) table with an index on
parent_id (the span: one `UPDATE ... SET content = replace(...) WHERE instr(...)`).

Both sides pay for the same file work: `secure_delete` on (loomdb keeps it on for every
connection, so freed bytes are zeroed) and a WAL checkpoint that truncates the WAL
after the commit. Wall time (a forget waits on its checkpoint's writes), the median of
three runs, each on its own subtree and node of the same store.

    python benchmarks/bench_forget.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from common import TEXT
from rich.console import Console
from rich.table import Table
from ulid import ULID

import loomdb
from loomdb.forget import service as F
from loomdb.forget import spans as S
from loomdb.storage_ops import storage

TOMBSTONE = '[{"text":"[redacted]","type":"text"}]'


class Floor:
    """Raw sqlite3: one table, parent index, the same pragmas and file work."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(str(path), isolation_level=None)
        for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "wal_autocheckpoint=10000",
                       "secure_delete=ON"):
            self.db.execute(f"PRAGMA {pragma}")
        self.db.execute("CREATE TABLE f (id TEXT PRIMARY KEY, parent_id TEXT, content TEXT)")
        self.db.execute("CREATE INDEX f_parent ON f (parent_id)")
        self.ids: list[str] = []

    def add(self, parent: str | None, text: str) -> str:
        nid = str(ULID())
        self.db.execute("INSERT INTO f VALUES (?,?,?)",
                        (nid, parent, json.dumps([{"type": "text", "text": text}])))
        return nid

    def delete(self, top: str) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        self.db.execute("WITH RECURSIVE s(id) AS (SELECT ? UNION ALL SELECT f.id FROM f"
                        " JOIN s ON f.parent_id = s.id) DELETE FROM f WHERE id IN s", (top,))
        self.db.execute("COMMIT")
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def redact(self, nid: str) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        self.db.execute("UPDATE f SET content = ? WHERE id = ?", (TOMBSTONE, nid))
        self.db.execute("COMMIT")
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def redact_text(self, text: str) -> int:
        self.db.execute("BEGIN IMMEDIATE")
        cur = self.db.execute("UPDATE f SET content = replace(content, ?, '[redacted:text]')"
                              " WHERE instr(content, ?) > 0", (text, text))
        self.db.execute("COMMIT")
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return cur.rowcount


#: the strings copied into one node in a hundred (one per run)
NEEDLES = [f"needle-{k}-7Qx9-copied-around" for k in range(3)]


def shape(n: int, sub: int, rng: random.Random) -> list[int]:
    """Parents (by index) of a bushy n-node tree (mostly continuations, a branch in
    three) whose last `sub` nodes form one subtree under node n - sub."""
    parents = [-1]
    for i in range(1, n):
        low = n - sub if i > n - sub else 0
        parents.append(rng.randrange(low, i) if i % 3 == 0 else i - 1)
    return parents


def build(loom: loomdb.Loom, floor: Floor, total: int, sub: int, runs: int) -> list[tuple[str, str]]:
    """`runs` subtrees of `sub` nodes under trees that fill the store to `total` nodes;
    (our subtree top, the floor's) per run."""
    rng = random.Random(7)
    tops: list[tuple[str, str]] = []
    per_tree = max(sub * 2, total // 5)
    made = 0
    t = 0
    while made < total:
        size = min(per_tree, total - made)
        parents = shape(size, sub, rng)
        tree, root = loom.new_tree(f"t{t} {TEXT[:60]}")
        ours, theirs = [root.id], [floor.add(None, f"t{t} {TEXT[:60]}")]
        with storage(loom).transaction():
            floor.db.execute("BEGIN")
            for i in range(1, size):
                text = f"t{t} n{i} {TEXT[:100]}"
                if i % 100 == 0:
                    text += f" {NEEDLES[(i // 100) % len(NEEDLES)]}"
                ours.append(loom.append(ours[parents[i]], text,
                                        role="assistant" if i % 2 else "user").id)
                theirs.append(floor.add(theirs[parents[i]], text))
                if len(tops) < runs and i == size - sub:
                    tops.append((ours[-1], theirs[-1]))
            floor.db.execute("COMMIT")
        made += size
        t += 1
    loom.fork(ours[-1], "main")  # a ref somewhere, as any store has
    floor.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return tops


def subtree_sizes(loom: loomdb.Loom, tops: list[tuple[str, str]]) -> list[int]:
    return [len(storage(loom).subtree(loom.node(top).slot)) for top, _ in tops]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="10,000 nodes, 1,000-node subtrees")
    args = parser.parse_args()
    total, sub, runs = (10_000, 1_000, 3) if args.quick else (100_000, 10_000, 3)
    console = Console()
    with tempfile.TemporaryDirectory() as tmp:
        loom = loomdb.open(str(Path(tmp) / "store"))
        floor = Floor(Path(tmp) / "floor.db")
        t0 = time.perf_counter()
        tops = build(loom, floor, total, sub, runs)
        console.print(f"built {total} nodes in {time.perf_counter() - t0:.1f} s; subtrees of "
                      f"{subtree_sizes(loom, tops)} nodes (floor: the same shape)")
        ours_span, floor_span, counts = [], [], []
        for needle in NEEDLES[:runs]:
            t0 = time.perf_counter()
            done = S.redact_spans(loom, S.spans_for(loom, text=needle), dry_run=False)
            ours_span.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            counts.append((len(done.ids), floor.redact_text(needle)))
            floor_span.append(time.perf_counter() - t0)
        console.print(f"redact --text: nodes changed per run (loomdb, floor): {counts}")
        ours_del, floor_del, ours_red, floor_red = [], [], [], []
        for top, ftop in tops:
            t0 = time.perf_counter()
            F.delete(loom, top, force=True)
            ours_del.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            floor.delete(ftop)
            floor_del.append(time.perf_counter() - t0)
        leaves = loom.leaves(loom.trees()[0].id)[:runs]
        fleaves = [r[0] for r in floor.db.execute(
            f"SELECT id FROM f ORDER BY random() LIMIT {runs}")]
        for nid, fid in zip(leaves, fleaves, strict=False):
            t0 = time.perf_counter()
            F.redact(loom, nid)
            ours_red.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            floor.redact(fid)
            floor_red.append(time.perf_counter() - t0)
        assert loom.verify().ok
        loom.close()
    table = Table(title=f"forgetting in a {total:,}-node SQLite store (wall time, median of {runs})")
    for col in ("operation", "loomdb", "raw sqlite3", "ratio", "target"):
        table.add_column(col, justify="right" if col != "operation" else "left")
    for label, o, f, target in ((f"delete a {sub:,}-node subtree", ours_del, floor_del, 1.0),
                                ("redact one node", ours_red, floor_red, 0.05),
                                ("redact --text (1 node in 100)", ours_span, floor_span, 5.0)):
        mo, mf = statistics.median(o), statistics.median(f)
        table.add_row(label, f"{mo * 1e3:.1f} ms", f"{mf * 1e3:.1f} ms", f"{mo / mf:.1f}x",
                      f"≤ {target * 1e3:.0f} ms {'ok' if mo <= target else 'MISSED'}")
    console.print(table)


if __name__ == "__main__":
    main()
