"""Search over a corpus of coding-agent sessions (`agent_corpus.py`), on both backends:
full-text p50/p95, hybrid p50, and what the store weighs per message beside the raw
text.

    python benchmarks/bench_search_corpus.py [--backends sqlite,postgres] [--mb 200]

The corpus is generated until its raw content (the messages' canonical JSON, as the
store keeps it) reaches `--mb` megabytes; sessions are written in bulk through the
store's own node insert (`backend.nodes.insert_node`, transactions of 5,000; one
session ref per tree), then indexed for full text by the search area's catch-up. For
hybrid, every entry gets a vector: random unit vectors (the ranking is an exact scan,
its cost does not depend on the values; the real model embeds some tens of entries a
second here), the query embedded by the real model inside the timing, on one store
handle (the in-memory ranking of a long-lived process, warmed by one query first).

Queries: 60, one or two identifiers or words from the corpus's vocabularies (common
and rare alike), `limit 20`. Figures: p50 and p95 in milliseconds (wall clock), the
store's bytes (SQLite: the database file and its WAL; PostgreSQL: the database's size)
per message, beside the raw content's bytes per message and the plain text's (what
is indexed). Goals at 3.5 GB: full text p50 <= 10 ms, p95 <= 50 ms, hybrid p50 <= 30 ms.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from agent_corpus import ENGLISH, Corpus, sessions  # noqa: E402
from bench_append_depth import TXN  # noqa: E402
from bench_search import store  # noqa: E402

from loomdb import Loom  # noqa: E402
from loomdb import content as C  # noqa: E402
from loomdb.chain import chain_hash  # noqa: E402
from loomdb.model import Node, new_id, now  # noqa: E402
from loomdb.search import SEARCH  # noqa: E402
from loomdb.search import index as I  # noqa: E402
from loomdb.search import service as S  # noqa: E402
from loomdb.search.semantic import SEMANTIC  # noqa: E402
from loomdb.search.semantic import index as V  # noqa: E402
from loomdb.search.semantic import model as M  # noqa: E402
from loomdb.store import areas  # noqa: E402


def build(lm: Loom, mb: float) -> dict[str, float]:
    """Sessions until `mb` MB of raw content; (messages, raw bytes, text bytes)."""
    with lm.unit(SEARCH):
        pass
    backend = lm.backend
    raw = text = messages = 0
    gen = sessions()
    while raw < mb * 1e6:
        with backend.transaction():
            batch = 0
            while batch < TXN and raw < mb * 1e6:
                msgs = next(gen)
                _, head = lm.new_tree(msgs[0][1], role="user", session=f"s{messages}")
                for role, blocks in msgs:
                    cid, body = C.encode(blocks)
                    raw += len(body)
                    text += len(C.plain_text(blocks).encode())
                    messages += 1
                    if head.id and role == "user" and blocks is msgs[0][1]:
                        continue  # (the tree's root, written by new_tree)
                    nid, created = new_id(), now()
                    head = Node(nid, head.tree, head.id, nid, head.depth + 1, role,
                                "message", "agent", "import", cid, blocks, created,
                                chain_hash(content_id=cid, parents=[head.chain_hash],
                                           created_at=created, author="agent", role=role,
                                           kind="message", edited_from=None, options=None))
                    backend.nodes.insert_node(head, body, 0)
                    areas.nodes_written(backend, (head,))
                    batch += 1
    return {"messages": messages, "raw": raw, "text": text}


def vectors(lm: Loom) -> int:
    """Every entry embedded with a random unit vector (see the module docstring)."""
    S.search(lm, S.Query("warm up", mode="semantic"))  # the area
    rng = np.random.default_rng(5)
    done = 0
    while True:
        with lm.unit(SEMANTIC) as db:
            rows = V.pending(db, 2000)
        if not rows:
            return done
        vec = rng.standard_normal((len(rows), M.DIMS)).astype("float32")
        vec /= np.linalg.norm(vec, axis=1, keepdims=True)
        with lm.unit(SEMANTIC) as db:
            V._store(db, [r[0] for r in rows], vec)
        done += len(rows)


def weight(lm: Loom, kind: str) -> int:
    """The store's bytes on disk (SQLite: its database file and WAL)."""
    if kind == "sqlite":
        path = Path(lm.backend.url.removeprefix("sqlite:///"))
        return sum(os.path.getsize(f) for f in path.parent.glob(path.name + "*"))
    return int(lm.backend.execute("SELECT pg_database_size(current_database())")[0][0])


def timed(lm: Loom, queries: list[str], mode: str) -> list[float]:
    S.search(lm, S.Query(queries[0], mode=mode))  # warm
    out = []
    for q in queries:
        t0 = time.perf_counter()
        S.search(lm, S.Query(q, limit=20, mode=mode))
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def run(kind: str, mb: float) -> dict[str, float]:
    with store(kind) as lm:
        t0 = time.perf_counter()
        made = build(lm, mb)
        t1 = time.perf_counter()
        I.catch_up(lm)
        lm.backend.settle()
        t2 = time.perf_counter()
        print(f"{kind}: {made['messages']:,} messages, {made['raw'] / 1e6:.0f} MB raw, "
              f"written in {t1 - t0:.0f} s, indexed in {t2 - t1:.0f} s", file=sys.stderr,
              flush=True)
        qrng = random.Random(3)
        names = Corpus().names
        pool = names[20:3000] + ENGLISH[40:]
        queries = [" ".join(qrng.sample(pool, qrng.choice([1, 2]))) for _ in range(60)]
        text = timed(lm, queries, "text")
        stored = weight(lm, kind)
        vectors(lm)
        M.embed(["load the model"])
        hybrid = timed(lm, queries, "hybrid")
        return {**made, "store": stored, "text_p50": statistics.median(text),
                "text_p95": sorted(text)[int(len(text) * 0.95)],
                "hybrid_p50": statistics.median(hybrid),
                "hybrid_p95": sorted(hybrid)[int(len(hybrid) * 0.95)]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backends", default="sqlite,postgres")
    ap.add_argument("--mb", type=float, default=200)
    args = ap.parse_args()
    for kind in args.backends.split(","):
        r = run(kind, args.mb)
        n = r["messages"]
        print(f"\n{kind}: {n:,} messages of agent sessions, {r['raw'] / 1e6:.0f} MB raw content")
        print(f"  full text p50 {r['text_p50']:.1f} ms  p95 {r['text_p95']:.1f} ms "
              "(goal <= 10 / <= 50)")
        print(f"  hybrid    p50 {r['hybrid_p50']:.1f} ms  p95 {r['hybrid_p95']:.1f} ms "
              "(goal p50 <= 30)")
        print(f"  store {r['store'] / 1e6:.0f} MB: {r['store'] / n:,.0f} bytes per message, "
              f"beside {r['raw'] / n:,.0f} raw ({r['text'] / n:,.0f} of plain text): "
              f"{r['store'] / r['raw']:.2f}x the raw content")


if __name__ == "__main__":
    main()
