"""HTTP append load on loopback, beside the library called directly, on both backends.

    python benchmarks/bench_http.py [--clients 8] [--appends 200] [--pg ADMIN_URL] [--sqlite-only]

A real `loomdb serve` process per store; clients are threads with one keep-alive
connection each. Scenarios:
  one session    every client appends through the same session: afterwards the
                 session's path must be one chain holding every append (nothing lost)
  own sessions   each client appends through its own session
  one client     a single client appending in turn (the latency of one append)
  library        the same appends through `Loom.append` in this process
Prints throughput, p50/p99 latency and the server's CPU time per append (which, unlike
latency, does not grow with the machine's load). Target: HTTP p50 <= 3 ms on SQLite.
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from common import TEXT
from rich.console import Console
from rich.table import Table

import loomdb

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def fresh_pg(admin: str) -> Iterator[str]:
    import psycopg

    name = f"loomdb_bench_{secrets.token_hex(4)}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{admin.rsplit('/', 1)[0]}/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc), 0 where unreadable: the
    server's cost per request, which unlike latency does not depend on the machine's load."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


SERVER_PID: list[int] = []


@contextmanager
def server(url: str) -> Iterator[str]:
    """`loomdb serve` on a free loopback port, stopped when the block ends."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "loomdb", "--db", url, "serve",
                             "--port", str(port)], env=env)
    SERVER_PID[:] = [proc.pid]
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(f"{base}/api/health").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.05)
        else:
            raise RuntimeError("the server did not start")
        yield base
    finally:
        proc.terminate()
        proc.wait(10)


def run_clients(base: str, targets: list[str], appends: int) -> tuple[float, list[float]]:
    """Each target gets one client thread appending `appends` times; (seconds, latencies)."""
    latencies: list[list[float]] = [[] for _ in targets]
    errors: list[str] = []
    start = threading.Barrier(len(targets) + 1)

    def client(i: int, target: str) -> None:
        with httpx.Client(base_url=base) as c:
            c.get("/api/health")  # open the connection before the clock starts
            start.wait()
            for k in range(appends):
                t0 = time.perf_counter()
                r = c.post(f"/api/nodes/{target}/append",
                           json={"role": "user" if k % 2 else "assistant", "text": TEXT})
                latencies[i].append(time.perf_counter() - t0)
                if r.status_code != 201:
                    errors.append(r.text)

    threads = [threading.Thread(target=client, args=(i, t)) for i, t in enumerate(targets)]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    if errors:
        raise RuntimeError(f"{len(errors)} appends failed, e.g. {errors[0]}")
    return wall, [x for lat in latencies for x in lat]


def library(url: str, appends: int) -> tuple[float, list[float]]:
    lat = []
    with loomdb.open(url) as lm:
        lm.new_tree("library", session="lib")
        t0 = time.perf_counter()
        for k in range(appends):
            a = time.perf_counter()
            lm.append("lib", TEXT, role="user" if k % 2 else "assistant")
            lat.append(time.perf_counter() - a)
        return time.perf_counter() - t0, lat


def row(table: Table, backend: str, scenario: str, wall: float, lat: list[float],
        cpu: float | None = None) -> None:
    lat = sorted(lat)
    p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))]
    table.add_row(backend, scenario, str(len(lat)), f"{len(lat) / wall:,.0f}",
                  f"{statistics.median(lat) * 1000:.2f}", f"{p99 * 1000:.2f}",
                  "-" if cpu is None else f"{cpu / len(lat) * 1000:.2f}")


def measured(base: str, targets: list[str], appends: int) -> tuple[float, list[float], float]:
    """run_clients, with the server's CPU seconds spent meanwhile."""
    before = cpu_seconds(SERVER_PID[0])
    wall, lat = run_clients(base, targets, appends)
    return wall, lat, cpu_seconds(SERVER_PID[0]) - before


def bench(backend: str, url: str, clients: int, appends: int, table: Table) -> None:
    with loomdb.open(url) as lm:
        lm.new_tree("shared", session="shared")
        for i in range(clients):
            lm.new_tree(f"own {i}", session=f"own{i}")
        lm.new_tree("single", session="single")
    with server(url) as base:
        run_clients(base, ["single"], 20)  # warm up: first appends load the tokenizer
        row(table, backend, "http, one client", *measured(base, ["single"], appends))
        row(table, backend, f"http, {clients} clients, one session",
            *measured(base, ["shared"] * clients, appends))
        row(table, backend, f"http, {clients} clients, own sessions",
            *measured(base, [f"own{i}" for i in range(clients)], appends))
    with loomdb.open(url) as lm:  # one chain, nothing lost
        path = lm.path("shared")
        assert len(path) == 1 + clients * appends, (len(path), clients * appends)
        assert len(set(path)) == len(path)
        assert len(lm.leaves("shared")) == 1
        for i in range(clients):
            assert len(lm.path(f"own{i}")) == 1 + appends
        assert len(lm.path("single")) == 1 + 20 + appends
    wall, lat = library(url, appends * clients)
    row(table, backend, "library, direct", wall, lat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--appends", type=int, default=200)
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--sqlite-only", action="store_true")
    args = parser.parse_args()
    table = Table(title=f"HTTP appends on loopback ({args.clients} clients x {args.appends})")
    for col in ("backend", "scenario", "appends", "appends/s", "p50 ms", "p99 ms",
                "server CPU ms/append"):
        table.add_column(col, justify="right" if col not in ("backend", "scenario") else "left")
    with tempfile.TemporaryDirectory() as tmp:
        bench("sqlite", str(Path(tmp) / "store"), args.clients, args.appends, table)
        if not args.sqlite_only:
            with fresh_pg(args.pg) as url:
                bench("postgres", f"{url}?blobs=file://{tmp}/pg-blobs", args.clients,
                      args.appends, table)
    Console().print(table)


if __name__ == "__main__":
    main()
