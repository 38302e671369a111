"""Full-text search on both backends: query p50, and what the index costs an append.

    python benchmarks/bench_search.py [--backends sqlite,postgres] [--budget 60]

For each backend: a corpus of ~500-character messages (Zipf-distributed words from a
fixed vocabulary, seeded) is appended through a session, 500 per transaction, for at
most `--budget` seconds of setup (the largest that fits is reported), then indexed; then

* query p50: 60 different one- and two-word queries, `limit 20`;
* append with index vs without: 1500 appends to a store without the search area and
  to one with it (the trigger queues each node), interleaved, plus the time to index
  them (what the next search pays), as ratios.

Targets: query p50 <= 20 ms; append with the index <= 1.5x append without.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import loomdb  # noqa: E402
from loomdb import Loom  # noqa: E402
from loomdb.search import SEARCH  # noqa: E402
from loomdb.search import index as I  # noqa: E402
from loomdb.search import service as S  # noqa: E402

_rng = random.Random(13)
_SYL = ["ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "zi", "pa", "do", "gu", "re", "ta"]
VOCAB = sorted({"".join(_rng.choice(_SYL) for _ in range(_rng.randint(2, 4)))
                for _ in range(8000)})
WEIGHTS = [1 / (i + 1) for i in range(len(VOCAB))]


def message(rng: random.Random) -> str:
    words = rng.choices(VOCAB, WEIGHTS, k=90)
    return " ".join(words)[:500]


@contextmanager
def store(kind: str) -> Iterator[Loom]:
    with tempfile.TemporaryDirectory() as tmp:
        if kind == "sqlite":
            with loomdb.open(str(Path(tmp) / "store")) as lm:
                yield lm
            return
        from pg import store_of

        with store_of("postgres", tmp) as url, loomdb.open(url) as lm:
            yield lm


def appends(lm: Loom, n: int, rng: random.Random) -> None:
    if not lm.refs("session"):
        lm.new_tree(message(rng), session="s")
    for _ in range(n):
        lm.append("s", message(rng), role="user")


def append_cost(kind: str, n: int = 1500) -> dict[str, float]:
    """Appends to a store without the search area and to one with it, interleaved in
    rounds of 100 so a busy machine slows both alike; CPU time on SQLite (all of its
    work is in this process), wall time on PostgreSQL."""
    clock = time.process_time if kind == "sqlite" else time.perf_counter
    rng = random.Random(1)
    with store(kind) as plain, store(kind) as indexed:
        with indexed.unit(SEARCH):
            pass
        appends(plain, 50, rng)
        appends(indexed, 50, rng)
        I.catch_up(indexed)
        without = with_queue = indexing = 0.0
        for _ in range(n // 100):
            t0 = clock()
            appends(plain, 100, rng)
            t1 = clock()
            appends(indexed, 100, rng)
            t2 = clock()
            I.catch_up(indexed)
            t3 = clock()
            without, with_queue, indexing = (without + t1 - t0, with_queue + t2 - t1,
                                             indexing + t3 - t2)
    return {"append_us": without / n * 1e6, "with_queue_us": with_queue / n * 1e6,
            "queue_ratio": with_queue / without,
            "with_index_ratio": (with_queue + indexing) / without}


def corpus_and_queries(kind: str, budget: float) -> dict[str, float]:
    rng = random.Random(2)
    with store(kind) as lm:
        with lm.unit(SEARCH):
            pass
        lm.new_tree(message(rng), session="s")
        t0 = time.perf_counter()
        n = 1
        while time.perf_counter() - t0 < budget:
            with lm.unit(SEARCH):  # 500 appends per transaction: a bulk load
                for _ in range(500):
                    lm.append("s", message(rng), role="user")
            n += 500
        build = time.perf_counter() - t0
        t1 = time.perf_counter()
        I.catch_up(lm)
        index = time.perf_counter() - t1
        qrng = random.Random(3)
        mid = VOCAB[50:2000]
        queries = [" ".join(qrng.sample(mid, qrng.choice([1, 2]))) for _ in range(60)]
        S.search(lm, S.Query(queries[0]))  # warm
        times, hits = [], 0
        for q in queries:
            q0 = time.perf_counter()
            hits += len(S.search(lm, S.Query(q, limit=20)))
            times.append(time.perf_counter() - q0)
    return {"messages": n, "build_s": build, "index_s": index,
            "query_p50_ms": statistics.median(times) * 1e3,
            "query_p95_ms": sorted(times)[int(len(times) * 0.95)] * 1e3,
            "mean_hits": hits / len(queries)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backends", default="sqlite,postgres")
    ap.add_argument("--budget", type=float, default=60.0, help="seconds of corpus setup")
    args = ap.parse_args()
    for kind in args.backends.split(","):
        cost = append_cost(kind)
        found = corpus_and_queries(kind, args.budget)
        print(f"{kind}: corpus {found['messages']} messages of ~500 chars "
              f"(built in {found['build_s']:.0f} s, indexed in {found['index_s']:.1f} s)")
        print(f"  full-text query p50 {found['query_p50_ms']:.2f} ms "
              f"(p95 {found['query_p95_ms']:.2f} ms, {found['mean_hits']:.1f} hits) "
              f"target <= 20 ms")
        print(f"  append {cost['append_us']:.0f} us; with the search queue "
              f"{cost['with_queue_us']:.0f} us ({cost['queue_ratio']:.2f}x); "
              f"queue + indexing {cost['with_index_ratio']:.2f}x; target <= 1.5x")


if __name__ == "__main__":
    main()
