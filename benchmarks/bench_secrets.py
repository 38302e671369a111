"""Secrets scanner benchmark: what looking at each appended message costs, beside the
append itself (goal: at most 20% on a plain-text turn).

Three figures on a SQLite store: the scanner alone on a plain-text turn (the
prefilter finds none of the rules' literals: one pass), on a turn holding a URL and a
`password =` (the prefilter hits; the rules named by what it found run), and on a
turn holding a key (redacted: the general append path); then the everyday text
append with the scanner off (`loomdb secrets --set all=off`) and on (the default),
median of nine interleaved runs of N appends each (in either order by turns),
each on its own session.

    python benchmarks/bench_secrets.py [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from common import TEXT
from rich.console import Console
from rich.table import Table

import loomdb
from loomdb.forget import secrets as S
from loomdb.secrets import Scanner

URLISH = (TEXT[:300] + " See https://docs.example.com/setup#install and set password = "
          "os.environ['DB_PASSWORD'] before running.")
KEYED = TEXT[:300] + " export OPENAI_API_KEY=sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" * 2


RUNS = 9


def per_call(fn, n: int) -> float:  # type: ignore[no-untyped-def]
    """Median microseconds per call over five runs of n calls."""
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        runs.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(runs)


def appends(lm: loomdb.Loom, n: int, text: str, run: int) -> float:
    """Microseconds per text append over one new session of n appends."""
    session = f"s-{len(text)}-{run}-{time.monotonic_ns()}"
    lm.new_tree("start", session=session)
    lm.append(session, text)  # (the session is now this Loom's: the fast path)
    t0 = time.perf_counter()
    for _ in range(n):
        lm.append(session, text)
    return (time.perf_counter() - t0) / n * 1e6


def compared(lm: loomdb.Loom, n: int) -> tuple[float, float, float]:
    """Median µs per append with the scanner off, on, and on with a URL-holding turn:
    runs interleaved, in either order by turns, so the machine's drift and the
    store's growth fall on both sides alike."""
    off: list[float] = []
    on: list[float] = []
    url: list[float] = []
    for run in range(RUNS):
        sides = [("off", off, TEXT), ("redact", on, TEXT), ("redact", url, URLISH)]
        for policy, into, text in sides if run % 2 else sides[::-1]:  # either order
            S.set_policy(lm, {"all": policy})
            into.append(appends(lm, n, text, run))
    return statistics.median(off), statistics.median(on), statistics.median(url)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    n = 200 if args.quick else 1000
    scan = Scanner()
    rows = [(f"scanner alone, {label}", per_call(lambda t=t: scan.text(t, "c", []), n * 10))
            for label, t in (("plain-text turn", TEXT), ("a URL and `password =`", URLISH),
                             ("a key (redacted)", KEYED))]
    with tempfile.TemporaryDirectory() as d, loomdb.open(Path(d) / "store") as lm:
        off, on, on_url = compared(lm, n)
    table = Table(title=f"secrets scanner (SQLite, {n} appends a run, median of {RUNS})")
    table.add_column("what")
    table.add_column("µs per message", justify="right")
    for label, us in rows:
        table.add_row(label, f"{us:.1f}")
    table.add_row("text append, scanner off", f"{off:.1f}")
    table.add_row("text append, scanner on (default policy)", f"{on:.1f}")
    table.add_row("text append with a URL, scanner on", f"{on_url:.1f}")
    table.add_row("overhead on a plain-text turn, measured (goal ≤ 20%)",
                  f"{100 * (on - off) / off:.1f}%")
    # the appends' difference is within a loaded machine's noise; the scanner's own
    # time beside the append is the steadier figure
    table.add_row("scanner alone / text append (scanner off)", f"{100 * rows[0][1] / off:.1f}%")
    Console().print(table)


if __name__ == "__main__":
    main()
