"""loomdb on PostgreSQL beside loomdb on SQLite and beside the floor: raw psycopg
doing the same rows (one table (id, parent_id, role, content), an index on parent_id,
inserts with a parent id, a recursive CTE to the root plus json.loads of each row).

Reports medians and ratios (PostgreSQL / floor, PostgreSQL / SQLite) for: append,
resolve at depth 10k, children and leaves in a 100k-node tree, and appends per second
with 1, 4 and 8 concurrent writers (processes) on different sessions. Durability is
each engine's default: PostgreSQL fsyncs every commit (synchronous_commit=on), SQLite
in WAL mode with synchronous=NORMAL does not, so single-writer appends compare a
durable commit with a buffered one. The plans of the hot reads are printed at the end.

    python benchmarks/bench_postgres.py [--quick] [--pg postgresql://postgres@127.0.0.1/postgres]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
from common import fresh_db, median_time
from rich.console import Console
from rich.table import Table
from ulid import ULID

import loomdb

TEXT = "x" * 500


# -- stores ---------------------------------------------------------------------------
class Floor:
    """Raw psycopg doing what loomdb does, with nothing else."""

    def __init__(self, url: str) -> None:
        self.db = psycopg.connect(url, autocommit=True, prepare_threshold=1)
        self.db.execute("CREATE TABLE IF NOT EXISTS f (id text COLLATE \"C\" PRIMARY KEY,"
                        " parent_id text COLLATE \"C\", role text, content text)")
        self.db.execute("CREATE INDEX IF NOT EXISTS f_parent ON f (parent_id)")

    def append(self, parent: str | None, text: str) -> str:
        nid = str(ULID())
        with self.db.transaction():
            self.db.execute("INSERT INTO f VALUES (%s,%s,%s,%s)",
                            (nid, parent, "user", json.dumps([{"type": "text", "text": text}])))
        return nid

    def bulk(self, rows: list[tuple[str, str | None, str]]) -> None:
        with self.db.transaction(), self.db.cursor() as cur:
            cur.executemany("INSERT INTO f VALUES (%s,%s,'user',%s)", rows)
        self.db.execute("VACUUM ANALYZE f")

    def resolve(self, head: str) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "WITH RECURSIVE p(id, parent_id, role, content, d) AS ("
            " SELECT id, parent_id, role, content, 0 FROM f WHERE id = %s"
            " UNION ALL SELECT f.id, f.parent_id, f.role, f.content, p.d + 1"
            " FROM f JOIN p ON f.id = p.parent_id)"
            " SELECT role, content FROM p ORDER BY d DESC", (head,)).fetchall()
        return [{"role": r, "content": json.loads(c)} for r, c in rows]

    def children(self, node: str) -> list[Any]:
        return self.db.execute("SELECT id FROM f WHERE parent_id = %s", (node,)).fetchall()

    def leaves(self) -> list[Any]:
        return self.db.execute(
            "SELECT id FROM f WHERE NOT EXISTS (SELECT 1 FROM f c WHERE c.parent_id = f.id)"
        ).fetchall()




# -- single-process operations -----------------------------------------------------------
def bench_append(looms: dict[str, loomdb.Loom], floor: Floor, n: int, rounds: int = 5
                 ) -> dict[str, float]:
    """Median per-append seconds over interleaved rounds (one transaction each)."""
    times: dict[str, list[float]] = {k: [] for k in [*looms, "floor"]}
    for loom in looms.values():
        loom.new_tree("root", session="bench")
    last = floor.append(None, "root")
    per = n // rounds
    for _ in range(rounds):
        for name, loom in looms.items():
            t0 = time.perf_counter()
            for _ in range(per):
                loom.append("bench", TEXT)
            times[name].append((time.perf_counter() - t0) / per)
        t0 = time.perf_counter()
        for _ in range(per):
            last = floor.append(last, TEXT)
        times["floor"].append((time.perf_counter() - t0) / per)
    return {k: statistics.median(v) for k, v in times.items()}


def _write(loom: loomdb.Loom, tree: str, parent: Any, text: str, role: str = "user") -> Any:
    """One node through the Loom's own write path (content, hash, insert), without the
    headish resolution an interactive append does: the fast way to build big trees."""
    return loom.write_node(tree=tree, parent=parent, blocks=[{"type": "text", "text": text}],
                       role=role, author=None, source="human", options=None, cache=False,
                       kind="message", created_at=None)


def build_chain(loom: loomdb.Loom, depth: int) -> str:
    tree, root = loom.new_tree("q", session="deep")
    node = root
    with loom.backend.transaction():
        for i in range(depth):
            node = _write(loom, tree.id, node, f"{i} {TEXT}", "assistant" if i % 2 else "user")
        loom.set_ref("deep", node.id)
    return loom.resolve("deep").node


def build_bushy(loom: loomdb.Loom, n: int, seed: int) -> tuple[str, list[str]]:
    rng = random.Random(seed)
    tree, root = loom.new_tree("big")
    nodes = [root]
    with loom.backend.transaction():
        for i in range(n - 1):
            parent = nodes[rng.randrange(len(nodes))] if i % 3 else nodes[-1]
            nodes.append(_write(loom, tree.id, parent, f"{i} {TEXT[:100]}"))
    return tree.id, [x.id for x in nodes]


def floor_rows_chain(depth: int) -> tuple[list[tuple[str, str | None, str]], str]:
    rows: list[tuple[str, str | None, str]] = []
    parent = None
    for i in range(depth + 1):
        nid = str(ULID())
        rows.append((nid, parent, json.dumps([{"type": "text", "text": f"{i} {TEXT}"}])))
        parent = nid
    return rows, parent  # type: ignore[return-value]


def floor_rows_bushy(n: int, seed: int) -> tuple[list[tuple[str, str | None, str]], list[str]]:
    rng = random.Random(seed)
    ids = [str(ULID())]
    rows: list[tuple[str, str | None, str]] = [(ids[0], None, "[]")]
    for i in range(n - 1):
        parent = ids[rng.randrange(len(ids))] if i % 3 else ids[-1]
        nid = str(ULID())
        rows.append((nid, parent, json.dumps([{"type": "text", "text": f"{i} {TEXT[:100]}"}])))
        ids.append(nid)
    return rows, ids


# -- concurrent writers ---------------------------------------------------------------
def _loom_writer(url: str, session: str, n: int, start: Any, out: Any) -> None:
    with loomdb.open(url) as loom:
        start.wait()
        for i in range(n):
            loom.append(session, f"{session} {i} {TEXT[:100]}")
    out.put(session)


def _floor_writer(url: str, session: str, n: int, start: Any, out: Any) -> None:
    floor = Floor(url)
    parent = floor.append(None, session)
    start.wait()
    for i in range(n):
        parent = floor.append(parent, f"{session} {i} {TEXT[:100]}")
    out.put(session)


def appends_per_second(url: str, writers: int, n: int, floor: bool = False) -> float:
    if not floor:
        with loomdb.open(url) as loom:
            _, root = loom.new_tree("shared")
            for i in range(writers):
                loom.fork(root.id, f"s{i}")
    else:
        Floor(url).db.close()
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Barrier(writers + 1), ctx.Queue()
    target = _floor_writer if floor else _loom_writer
    procs = [ctx.Process(target=target, args=(url, f"s{i}", n, start, out))
             for i in range(writers)]
    for p in procs:
        p.start()
    start.wait()
    t0 = time.perf_counter()
    for _ in procs:
        out.get(timeout=600)
    elapsed = time.perf_counter() - t0
    for p in procs:
        p.join()
    return writers * n / elapsed


# -- main -----------------------------------------------------------------------------
def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/postgres",
                        help="an admin URL allowed to CREATE DATABASE")
    args = parser.parse_args()
    n_append, depth, big, conc = (500, 2000, 10_000, 100) if args.quick else (
        2000, 10_000, 100_000, 300)
    console = Console()
    table = Table(title="loomdb on PostgreSQL vs SQLite vs raw psycopg (floor) — medians, "
                        f"Python {sys.version.split()[0]}")
    for col in ("operation", "loomdb pg", "loomdb sqlite", "floor (psycopg)", "pg/floor",
                "pg/sqlite"):
        table.add_column(col, justify="left" if col == "operation" else "right")

    def row(name: str, pg: float, sq: float | None, fl: float | None, unit: str = "ms",
            scale: float = 1e3, higher_is_better: bool = False) -> None:
        def fmt(v: float | None) -> str:
            return "-" if v is None else f"{v * scale:.3f} {unit}"

        def ratio(a: float, b: float | None) -> str:
            if b is None:
                return "-"
            return f"{(b / a if higher_is_better else a / b):.2f}x"

        table.add_row(name, fmt(pg), fmt(sq), fmt(fl), ratio(pg, fl), ratio(pg, sq))

    plans: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmpd = Path(tmp)
        # appends
        with fresh_db(args.pg) as url:
            looms = {"pg": loomdb.open(url + f"?blobs=file://{tmpd}/b1"),
                     "sqlite": loomdb.open(str(tmpd / "append"))}
            r = bench_append(looms, Floor(url), n_append)
            row(f"append, linear thread ({n_append}, one transaction each)", r["pg"],
                r["sqlite"], r["floor"], "µs", 1e6)
            for lm in looms.values():
                lm.close()
        # resolve at depth
        with fresh_db(args.pg) as url:
            pg = loomdb.open(url + f"?blobs=file://{tmpd}/b2")
            sq = loomdb.open(str(tmpd / "deep"))
            heads = {"pg": build_chain(pg, depth), "sqlite": build_chain(sq, depth)}
            pg.backend.execute("VACUUM ANALYZE")
            floor = Floor(url)
            rows, fhead = floor_rows_chain(depth)
            floor.bulk(rows)
            ctx = {k: median_time(lambda lm=lm, k=k: lm.context(heads[k]), 11)
                   for k, lm in (("pg", pg), ("sqlite", sq))}
            path = {k: median_time(lambda lm=lm, k=k: lm.path(heads[k]), 11)
                    for k, lm in (("pg", pg), ("sqlite", sq))}
            f = median_time(lambda: floor.resolve(fhead), 11)
            row(f"resolve context at depth {depth} (normalized messages)", ctx["pg"],
                ctx["sqlite"], f)
            row(f"resolve path ids at depth {depth}", path["pg"], path["sqlite"], f)
            plans[f"walk (depth {depth})"] = pg.backend.explain("walk", (heads["pg"],), True)
            pg.close()
            sq.close()
        # children / leaves on a big bushy tree
        with fresh_db(args.pg) as url:
            pg = loomdb.open(url + f"?blobs=file://{tmpd}/b3")
            sq = loomdb.open(str(tmpd / "big"))
            t0 = time.perf_counter()
            trees = {"pg": build_bushy(pg, big, 11), "sqlite": build_bushy(sq, big, 11)}
            pg.backend.execute("VACUUM ANALYZE")
            floor = Floor(url)
            frows, fids = floor_rows_bushy(big, 11)
            floor.bulk(frows)
            console.print(f"[dim]built three {big}-node trees in {time.perf_counter() - t0:.1f}s"
                          "[/dim]")
            rng = random.Random(3)
            sample = [rng.randrange(big) for _ in range(2000)]
            ch = {k: median_time(lambda lm=lm, k=k: [lm.backend.nodes.children(trees[k][1][i])
                                                     for i in sample], 5) / len(sample)
                  for k, lm in (("pg", pg), ("sqlite", sq))}
            f = median_time(lambda: [floor.children(fids[i]) for i in sample], 5) / len(sample)
            row(f"children of a node ({big}-node tree)", ch["pg"], ch["sqlite"], f, "µs", 1e6)
            lv = {k: median_time(lambda lm=lm, k=k: lm.leaves(trees[k][0]), 5)
                  for k, lm in (("pg", pg), ("sqlite", sq))}
            f = median_time(floor.leaves, 5)
            row(f"leaves ({big}-node tree)", lv["pg"], lv["sqlite"], f)
            plans[f"children ({big})"] = pg.backend.explain(
                "children", (trees["pg"][1][sample[0]],), True)
            plans[f"leaves ({big})"] = pg.backend.explain("leaves", (trees["pg"][0],), True)
            pg.close()
            sq.close()
        # concurrent writers on different sessions
        for writers in (1, 4, 8):
            with fresh_db(args.pg) as url:
                p = appends_per_second(url + f"?blobs=file://{tmpd}/b4", writers, conc)
            s = appends_per_second(str(tmpd / f"conc{writers}"), writers, conc)
            with fresh_db(args.pg) as url:
                f = appends_per_second(url, writers, conc, floor=True)
            row(f"appends/s, {writers} writer(s) on different sessions ({conc} each)",
                p, s, f, "/s", 1.0, higher_is_better=True)
    console.print(table)
    console.print("[dim]ratios: time ratios (lower is better); for appends/s, floor/pg and "
                  "sqlite/pg (lower is better too)[/dim]")
    for name, plan in plans.items():
        console.print(f"\n[bold]EXPLAIN ANALYZE {name}[/bold]")
        console.print(plan, markup=False, highlight=False)


if __name__ == "__main__":
    main()
