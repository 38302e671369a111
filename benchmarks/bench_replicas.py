"""Reads from hot standbys: does adding standbys add read throughput?

Starts its own PostgreSQL primary and two hot standbys (tests/cluster.py), writes a
conversation 1,000 messages deep, then for 0, 1 and 2 standbys named in the URL runs
8 reader processes (each `Loom.context` at that depth, in a loop) beside 2 writer
processes (appending to sessions of their own tree) for a fixed time. Reported per
setting: reads/s, p50/p99 read latency, writes/s, the largest replay lag the primary
saw (`pg_stat_replication.replay_lag`) and how busy the machine's CPUs were (from
/proc/stat), because on a small machine the CPUs, not the servers, are the bound.

    python benchmarks/bench_replicas.py [--seconds 8] [--depth 1000] [--readers 8]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import psycopg  # noqa: E402
from common import TEXT  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

import loomdb  # noqa: E402
from cluster import Cluster  # noqa: E402


def _reader(url: str, head: str, seconds: float, out: Any) -> None:
    latencies = []
    with loomdb.open(url) as loom:
        loom.context(head)  # warm the connection
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            t0 = time.perf_counter()
            loom.context(head)
            latencies.append(time.perf_counter() - t0)
        out.put(("read", latencies, loom.backend.served))  # type: ignore[attr-defined]


def _writer(url: str, session: str, seconds: float, out: Any) -> None:
    done = 0
    with loomdb.open(url) as loom:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            loom.append(session, f"{done} {TEXT}")
            done += 1
    out.put(("write", done, {}))


def _cpu() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs so far."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def _run(cluster: Cluster, db: str, standbys: int, head: str, args: argparse.Namespace,
         ) -> dict[str, Any]:
    url = cluster.url(db, cluster.standbys[:standbys]) + "&blobs=file:///tmp/loomdb-bench-b"
    if standbys == 0:
        url = cluster.primary.dsn(db) + "?blobs=file:///tmp/loomdb-bench-b"
    out: Any = mp.Queue()
    procs = [mp.Process(target=_reader, args=(url, head, args.seconds, out))
             for _ in range(args.readers)]
    procs += [mp.Process(target=_writer, args=(url, f"writer{i}", args.seconds, out))
              for i in range(2)]
    busy0, total0 = _cpu()
    for p in procs:
        p.start()
    lag = 0.0
    with psycopg.connect(cluster.primary.dsn(), autocommit=True) as conn:
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            row = conn.execute("SELECT coalesce(max(extract(epoch FROM replay_lag)), 0)"
                               " FROM pg_stat_replication").fetchone()
            lag = max(lag, float(row[0]) if row else 0.0)
            time.sleep(0.1)
    results = [out.get() for _ in procs]
    for p in procs:
        p.join()
    busy1, total1 = _cpu()
    reads = sorted(x for kind, got, _ in results if kind == "read" for x in got)
    writes = sum(got for kind, got, _ in results if kind == "write")
    served: dict[str, int] = {}
    for _kind, _, where in results:
        for name, n in where.items():
            served[name] = served.get(name, 0) + n
    on_standbys = sum(n for name, n in served.items() if name != "primary")
    return {
        "reads/s": len(reads) / args.seconds,
        "p50": statistics.median(reads) * 1000,
        "p99": reads[int(len(reads) * 0.99) - 1] * 1000,
        "writes/s": writes / args.seconds,
        "lag": lag * 1000,
        "cpu": 100 * (busy1 - busy0) / max(1, total1 - total0),
        "standby share": 100 * on_standbys / max(1, sum(served.values())),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--readers", type=int, default=8)
    args = parser.parse_args()
    cluster = Cluster.start(2)
    try:
        with psycopg.connect(cluster.primary.dsn(), autocommit=True) as conn:
            conn.execute("CREATE DATABASE bench")
        url = cluster.primary.dsn("bench") + "?blobs=file:///tmp/loomdb-bench-b"
        with loomdb.open(url) as loom:
            tree, root = loom.new_tree(TEXT, session="deep")
            for i in range(args.depth - 1):
                loom.append("deep", f"{i} {TEXT}", role="assistant" if i % 2 == 0 else "user")
            head = loom.resolve("deep").node
            _, wroot = loom.new_tree("writers")
            for i in range(2):
                loom.fork(wroot.id, f"writer{i}")
            # planner statistics, as autovacuum would have them on a store in use (a
            # fresh table without them walks by hash joins over the whole table)
            loom.backend.execute("ANALYZE")
        cluster.wait_replayed()
        table = Table(title=f"{args.readers} readers (context at depth {args.depth}) + 2 "
                            f"writers, {args.seconds:g} s each")
        cols = ("standbys", "reads/s", "p50 ms", "p99 ms", "writes/s", "max replay lag ms",
                "CPU busy %", "reads on standbys %")
        for col in cols:
            table.add_column(col, justify="right")
        base = None
        for standbys in (0, 1, 2):
            r = _run(cluster, "bench", standbys, head, args)
            base = base or r["reads/s"]
            table.add_row(str(standbys), f"{r['reads/s']:.1f} (x{r['reads/s'] / base:.2f})",
                          f"{r['p50']:.1f}", f"{r['p99']:.1f}", f"{r['writes/s']:.1f}",
                          f"{r['lag']:.1f}", f"{r['cpu']:.0f}", f"{r['standby share']:.0f}")
        Console(width=140).print(table)
        print(f"machine: {mp.cpu_count()} CPUs")
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
