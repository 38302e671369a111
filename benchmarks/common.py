"""What the benchmarks share: the message text and a median timer.

`clock` is the timer every measurement uses: wall time (`time.perf_counter`) unless a
benchmark sets CPU time (`time.process_time`), as bench_core and bench_buffer do.
"""

from __future__ import annotations

import secrets
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

TEXT = ("A loom holds the warp threads taut so the weft can be woven through them; "
        "every pass of the shuttle adds one row of cloth. " * 4)[:490]

clock: Callable[[], float] = time.perf_counter


def median_time(fn: Callable[[], object], repeat: int = 5,
                before: Callable[[], None] | None = None) -> float:
    """Median seconds of `repeat` calls of `fn` (each after `before`, untimed)."""
    times = []
    for _ in range(repeat):
        if before:
            before()
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return statistics.median(times)


@contextmanager
def fresh_db(admin: str) -> Iterator[str]:
    """A new, empty PostgreSQL database on the server of `admin` (a URL allowed to
    CREATE DATABASE), dropped at the end."""
    import psycopg  # (only the benchmarks that measure PostgreSQL)

    name = f"loomdb_bench_{secrets.token_hex(4)}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base = admin.rsplit("/", 1)[0]
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
