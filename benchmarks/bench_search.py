"""Search on both backends: full-text and semantic query p50, and what the index
costs an append.

    python benchmarks/bench_search.py [--backends sqlite,postgres] [--budget 60]
        [--semantic-messages 100000] [--embed-budget 60] [--semantic-only]
    python benchmarks/bench_search.py --scale 1000000 [--backends sqlite,postgres]
    python benchmarks/bench_search.py --model [--baseline-src OLD_LOOMDB/src]

For each backend: a corpus of ~500-character messages (Zipf-distributed words from a
fixed vocabulary, seeded) is appended through a session, 500 per transaction, for at
most `--budget` seconds of setup (the largest that fits is reported), then indexed; then

* query p50: 60 different one- and two-word queries, `limit 20`;
* append with index vs without: 1500 appends to a store without the search area and
  to one with it (its write hook queues each node), interleaved, plus the time to index
  them (what the next search pays), as ratios.

* semantic query p50: a corpus of `--semantic-messages` messages (same generator;
  PostgreSQL's built on SQLite and copied over by `migrate`), indexed for full text,
  then embedded: with the real model for `--embed-budget`
  seconds (all-MiniLM-L6-v2 on this CPU embeds some tens of messages of 500
  characters a second, so 100k would take about half an hour), the rest with random unit vectors
  (synthetic: the ranking is an exact scan, so its cost does not depend on the
  values); then 60 queries, each embedded by the real model inside the timing,
  `limit 20`, semantic and hybrid, on one store handle (a long-lived process: the
  in-memory ranking); and a fresh handle's first query (a one-shot process: SQLite's
  vec0 scan, PostgreSQL's matrix load). The model is loaded before timing.

`--model` instead compares the embedding model with the one before it, side by side:
retrieval recall@5/@10 on paraphrased questions over real conversations, documents per
second, and a fresh `loomdb search --semantic` process (see `semantic_model.py`).

Targets: query p50 <= 20 ms; append with the index <= 1.5x append without; semantic
query p50 <= 50 ms over 100k messages; a fresh semantic search process <= 1 s, recall
and documents per second at least the torch model's.
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

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import loomdb  # noqa: E402
from loomdb import Loom  # noqa: E402
from loomdb.search import SEARCH, chunks  # noqa: E402
from loomdb.search import index as I  # noqa: E402
from loomdb.search import service as S  # noqa: E402
from loomdb.search.semantic import SEMANTIC  # noqa: E402
from loomdb.search.semantic import index as V  # noqa: E402
from loomdb.search.semantic import model as M  # noqa: E402

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
    work is in this process), wall time on PostgreSQL. On PostgreSQL the tail is sealed
    into a ranked chunk every 500 entries instead of every 20,000, so the indexing
    measured includes chunk builds (more and smaller ones than in use: pessimistic)."""
    clock = time.process_time if kind == "sqlite" else time.perf_counter
    seal, chunks.SEAL = chunks.SEAL, 500
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
    chunks.SEAL = seal
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


def build_corpus(lm: Loom, n: int) -> None:
    """`n` messages on one session, 500 appends per transaction (a bulk load)."""
    rng = random.Random(4)
    with lm.unit(SEARCH):
        pass
    lm.new_tree(message(rng), session="s")
    done = 1
    while done < n:
        with lm.unit(SEARCH):
            for _ in range(min(500, n - done)):
                lm.append("s", message(rng), role="user")
                done += 1


@contextmanager
def semantic_corpus(kind: str, n: int) -> Iterator[Loom]:
    """A store holding the corpus. PostgreSQL's is built on SQLite and copied over with
    `migrate` (`copy_store`), as `--scale` does: one session appended 100,000 deep
    through the network costs far more than the copy, and the copy is the path a store
    of that size takes to PostgreSQL."""
    if kind == "sqlite":
        with store(kind) as lm:
            build_corpus(lm, n)
            yield lm
        return
    from loomdb.api import copy_store
    from pg import store_of

    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "built")
        with loomdb.open(path) as built:
            build_corpus(built, n)
        with store_of("postgres", tmp) as url:
            copy_store(path, url)
            with loomdb.open(url) as lm:
                yield lm


def semantic_queries(kind: str, n: int, embed_budget: float) -> dict[str, float]:
    with semantic_corpus(kind, n) as lm:
        done = n
        I.catch_up(lm)
        M.embed(["load the model"])
        real = synthetic = 0
        t0 = time.perf_counter()
        nrng = np.random.default_rng(5)
        while True:
            with lm.unit(SEMANTIC) as db:
                rows = V.pending(db, 256)
            if not rows:
                break
            if time.perf_counter() - t0 < embed_budget:
                vectors = M.embed([r[1] for r in rows])
                real += len(rows)
            else:
                vectors = nrng.standard_normal((len(rows), M.DIMS)).astype("float32")
                vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
                synthetic += len(rows)
            with lm.unit(SEMANTIC) as db:
                V._store(db, [r[0] for r in rows], vectors)
        qrng = random.Random(6)
        mid = VOCAB[50:2000]
        queries = [" ".join(qrng.sample(mid, qrng.choice([1, 2]))) for _ in range(60)]
        found: dict[str, float] = {"messages": done, "real": real, "synthetic": synthetic}
        firsts = []
        for q in queries[:7]:  # a fresh handle's first query (a one-shot process's)
            with loomdb.open(lm.backend.url) as once:
                q0 = time.perf_counter()
                S.search(once, S.Query(q, limit=20, mode="semantic"))
                firsts.append(time.perf_counter() - q0)
        found["first_p50_ms"] = statistics.median(firsts) * 1e3
        for mode in ("semantic", "hybrid"):
            S.search(lm, S.Query(queries[0], mode=mode))  # warm: the PostgreSQL cache
            times = []
            for q in queries:
                q0 = time.perf_counter()
                S.search(lm, S.Query(q, limit=20, mode=mode))
                times.append(time.perf_counter() - q0)
            found[f"{mode}_p50_ms"] = statistics.median(times) * 1e3
            found[f"{mode}_p95_ms"] = sorted(times)[int(len(times) * 0.95)] * 1e3
        e0 = time.perf_counter()
        for q in queries:
            M.embed([q])
        found["embed_ms"] = (time.perf_counter() - e0) / len(queries) * 1e3
        found["recall"] = recall(lm, queries)
    return found


def recall(lm: Loom, queries: list[str]) -> float:
    """Recall@20 of the semantic ranking against an exact scan of every vector."""
    with lm.unit(SEMANTIC) as db:
        rows = db.execute("SELECT v.seq, v.embedding, e.entity FROM search_vectors v "
                          "JOIN search_entries e ON e.seq = v.seq")
    matrix = np.frombuffer(b"".join(bytes(r[1]) for r in rows), np.float32).reshape(
        len(rows), M.DIMS)
    entities = [r[2] for r in rows]
    hit = total = 0
    for q in queries:
        scores = matrix @ M.embed([q])[0]
        exact = {entities[i] for i in np.argsort(-scores)[:20]}
        got = {h["entity"] for h in S.search(lm, S.Query(q, limit=20, mode="semantic"))}
        hit, total = hit + len(exact & got), total + len(exact)
    return hit / total


def fts_queries(lm: Loom) -> dict[str, float]:
    """Full-text p50/p95 of 60 one- and two-word queries, `limit 20`, warmed once."""
    qrng = random.Random(3)
    mid = VOCAB[50:2000]
    queries = [" ".join(qrng.sample(mid, qrng.choice([1, 2]))) for _ in range(60)]
    S.search(lm, S.Query(queries[0]))
    times, hits = [], 0
    for q in queries:
        q0 = time.perf_counter()
        hits += len(S.search(lm, S.Query(q, limit=20)))
        times.append(time.perf_counter() - q0)
    return {"query_p50_ms": statistics.median(times) * 1e3,
            "query_p95_ms": sorted(times)[int(len(times) * 0.95)] * 1e3,
            "mean_hits": hits / len(queries)}


def at_scale(n: int, backends: list[str]) -> None:
    """A corpus of exactly `n` messages: appended on SQLite (500 per transaction) and
    indexed; copied to PostgreSQL with `migrate` (which rebuilds the index there);
    full-text queries on each."""
    from loomdb.api import copy_store

    rng = random.Random(2)
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "store")
        with loomdb.open(path) as lm:
            with lm.unit(SEARCH):
                pass
            lm.new_tree(message(rng), session="s")
            t0 = time.perf_counter()
            for start in range(1, n, 500):
                with lm.unit(SEARCH):
                    for _ in range(min(500, n - start)):
                        lm.append("s", message(rng), role="user")
            build = time.perf_counter() - t0
            t1 = time.perf_counter()
            I.catch_up(lm)
            index = time.perf_counter() - t1
            found = fts_queries(lm)
        size = sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())
        print(f"sqlite: {n} messages of ~500 chars, appended in {build:.0f} s, indexed in "
              f"{index:.0f} s, store {size / 2**20:.0f} MiB: full-text query p50 "
              f"{found['query_p50_ms']:.2f} ms (p95 {found['query_p95_ms']:.2f} ms, "
              f"{found['mean_hits']:.1f} hits) target <= 20 ms")
        if "postgres" not in backends:
            return
        from pg import store_of

        with store_of("postgres", tmp) as url:
            t0 = time.perf_counter()
            copy_store(path, url)
            copied = time.perf_counter() - t0
            with loomdb.open(url) as lm:
                found = fts_queries(lm)
        print(f"postgres: the same {n} messages, copied and indexed in {copied:.0f} s: "
              f"full-text query p50 {found['query_p50_ms']:.2f} ms "
              f"(p95 {found['query_p95_ms']:.2f} ms, {found['mean_hits']:.1f} hits) "
              "target <= 20 ms")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backends", default="sqlite,postgres")
    ap.add_argument("--budget", type=float, default=60.0, help="seconds of corpus setup")
    ap.add_argument("--semantic-messages", type=int, default=100_000)
    ap.add_argument("--embed-budget", type=float, default=60.0,
                    help="seconds of real embedding (the rest is synthetic)")
    ap.add_argument("--scale", type=int, default=0,
                    help="instead: full text over exactly N messages (SQLite, then "
                    "copied to PostgreSQL)")
    ap.add_argument("--semantic-only", action="store_true",
                    help="only the semantic corpus and its queries")
    ap.add_argument("--model", action="store_true",
                    help="instead: the embedding model beside the one before it")
    ap.add_argument("--baseline-src", default=None,
                    help="with --model: also time a fresh process of the loomdb source here")
    args = ap.parse_args()
    if args.model:
        import semantic_model

        semantic_model.report(args.baseline_src)
        return
    if args.scale:
        at_scale(args.scale, args.backends.split(","))
        return
    for kind in args.backends.split(","):
        if args.semantic_only:
            sem = semantic_queries(kind, args.semantic_messages, args.embed_budget)
            print(f"{kind}: semantic corpus {sem['messages']:.0f} messages "
                  f"({sem['real']:.0f} embedded by the model, {sem['synthetic']:.0f} "
                  f"synthetic): query p50 {sem['semantic_p50_ms']:.2f} ms "
                  f"(p95 {sem['semantic_p95_ms']:.2f} ms; query embedding "
                  f"{sem['embed_ms']:.2f} ms of it) target <= 50 ms; hybrid p50 "
                  f"{sem['hybrid_p50_ms']:.2f} ms; recall@20 {sem['recall']:.3f}; a fresh "
                  f"handle's first query p50 {sem['first_p50_ms']:.2f} ms")
            continue
        cost = append_cost(kind)
        found = corpus_and_queries(kind, args.budget)
        sem = semantic_queries(kind, args.semantic_messages, args.embed_budget)
        print(f"{kind}: corpus {found['messages']} messages of ~500 chars "
              f"(built in {found['build_s']:.0f} s, indexed in {found['index_s']:.1f} s)")
        print(f"  full-text query p50 {found['query_p50_ms']:.2f} ms "
              f"(p95 {found['query_p95_ms']:.2f} ms, {found['mean_hits']:.1f} hits) "
              f"target <= 20 ms")
        print(f"  append {cost['append_us']:.0f} us; with the search queue "
              f"{cost['with_queue_us']:.0f} us ({cost['queue_ratio']:.2f}x); "
              f"queue + indexing {cost['with_index_ratio']:.2f}x; target <= 1.5x")
        print(f"  semantic corpus {sem['messages']:.0f} messages: {sem['real']:.0f} embedded "
              f"by the model, {sem['synthetic']:.0f} with synthetic vectors")
        print(f"  semantic query p50 {sem['semantic_p50_ms']:.2f} ms "
              f"(p95 {sem['semantic_p95_ms']:.2f} ms; query embedding {sem['embed_ms']:.2f} ms "
              f"of it) target <= 50 ms; beside full-text p50 {found['query_p50_ms']:.2f} ms")
        print(f"  semantic recall@20 against an exact scan {sem['recall']:.3f}")
        print(f"  a fresh handle's first semantic query p50 {sem['first_p50_ms']:.2f} ms "
              "(SQLite: the vec0 scan; PostgreSQL: loading the in-process matrix)")
        print(f"  hybrid query p50 {sem['hybrid_p50_ms']:.2f} ms "
              f"(p95 {sem['hybrid_p95_ms']:.2f} ms)")


if __name__ == "__main__":
    main()
