"""Append cost by session depth and store size, every area installed, on both backends.

    python benchmarks/bench_append_depth.py [--backends sqlite,postgres]
        [--sizes 0,100000,1000000] [--depths 10,1000,10000,100000] [--appends 300]

For each backend and store size S: a store with every area loomdb ships installed
(search and semantic included, so each append queues its node for indexing), holding
S messages in sessions of 100 (each a tree with its session ref) and indexed for full
text, as a store that has been searched; then one session grown to each depth in turn
(10, 1k, 10k, 100k), and at each depth `--appends` library appends to it timed two
ways: each in its own transaction (`loom.append`), and 100 per transaction (inside
`loom.unit(SEARCH)`, as a bulk load does). Figures are medians of per-append wall
time in microseconds (a few of them, the slowest, cut by the median); the ratio is to
the 10-deep session in the empty store, the floor (goal: 100k deep in 1M within 1.5x).

Building: messages are not appended one by one through the API (1M appends cost far
more than the measurement). The filler and the deep session's nodes are written in
bulk through the store's own node insert (`backend.nodes.insert_node`: the real rows,
content, keys and indexes), in transactions of 5,000, their chain hashes made as an
append makes them; the filler is then indexed for full text by the search area's own
catch-up. The depth-grown session's ref is moved once to its new head.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import time
from contextlib import nullcontext
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from bench_search import store  # noqa: E402  (a fresh store of a backend)

from loomdb import Loom  # noqa: E402
from loomdb import content as C  # noqa: E402
from loomdb import refs as R  # noqa: E402
from loomdb.chain import chain_hash  # noqa: E402
from loomdb.model import Node, new_id, now  # noqa: E402
from loomdb.search import SEARCH  # noqa: E402
from loomdb.search import index as I  # noqa: E402
from loomdb.store import areas  # noqa: E402

TEXT = ("The build failed in the linker step; the fix moves the flag to the right target "
        "and reruns the tests, which pass. ")[:400]
PER_TREE = 100
TXN = 5000
#: appends per round; rounds alternate between the store measured and the floor's
ROUND = 20


def install_every_area(lm: Loom) -> list[str]:
    names = []
    for name, where in sorted(areas.BUILTIN.items()):
        module, _, attr = where.partition(":")
        try:
            area = getattr(importlib.import_module(module), attr)
            with lm.unit(area):
                pass
        except Exception as exc:  # an area whose extra is missing here
            print(f"  (area {name} not installed: {type(exc).__name__})", file=sys.stderr)
            continue
        names.append(name)
    return names


def child(parent: Node, text: str) -> tuple[Node, bytes]:
    """The node an append of `text` after `parent` writes (as `Loom.append` makes it)."""
    body = C.text_body(text)
    cid, nid, created = C.digest(body), new_id(), now()
    tokens = len(text) // 4
    node = Node(nid, parent.tree, parent.id, nid, parent.depth + 1, "user", "message",
                "bench", "human", cid, [{"type": "text", "text": text}], created,
                chain_hash(content_id=cid, parents=[parent.chain_hash], created_at=created,
                           author="bench", role="user", kind="message", edited_from=None,
                           options=None),
                None, None, False, tokens, parent.total_tokens + tokens)
    return node, body


def chain(lm: Loom, head: Node, n: int, tag: str) -> Node:
    """`n` nodes below `head`, one after the other, written in bulk; the last."""
    backend = lm.backend
    done = 0
    while done < n:
        with backend.transaction():
            for _ in range(min(TXN, n - done)):
                done += 1
                head, body = child(head, f"{tag} {done} {TEXT}")
                backend.nodes.insert_node(head, body, 0)
                areas.nodes_written(backend, (head,))
    return head


def fill(lm: Loom, size: int) -> None:
    """`size` messages in sessions of PER_TREE, then indexed for full text."""
    made = 0
    while made < size:
        _, root = lm.new_tree(f"filler {made} {TEXT}", session=f"f{made}")
        chain(lm, root, min(PER_TREE, size - made) - 1, f"f{made}")
        made += PER_TREE
    I.catch_up(lm)
    lm.backend.settle()


def deepen(lm: Loom, depth: int) -> None:
    """Grow session `deep` to `depth` nodes and move it to its last."""
    ref = lm.backend.refs.get_ref("deep")
    assert ref is not None
    head = lm.node(ref.node)
    last = chain(lm, head, max(0, depth - head.depth - 1), "deep")
    with lm.backend.transaction():
        R.move(lm.backend, lm.backend.refs.get_ref("deep"), last.id,  # type: ignore[arg-type]
               actor="bench", reason="bulk")
    I.catch_up(lm)
    lm.backend.settle()


def appends(lm: Loom, n: int, start: int, batched: bool) -> list[float]:
    """Seconds of each of `n` appends to `deep` (`batched`: in one transaction)."""
    times = []
    with lm.unit(SEARCH) if batched else nullcontext():
        for i in range(start, start + n):
            t0 = time.perf_counter()
            lm.append("deep", f"{i} {TEXT}", role="user")
            times.append(time.perf_counter() - t0)
    return times


def per_append(lm: Loom, floor: Loom, n: int, batched: bool) -> tuple[float, float]:
    """Median microseconds of one append to `deep` in `lm` and in `floor`, measured in
    alternating rounds of 20 (`batched`: each round one transaction), so a machine
    whose load changes slows both alike."""
    measured: list[float] = []
    base: list[float] = []
    for lm_ in (lm, floor):
        lm_.append("deep", "warm " + TEXT, role="user")
    for start in range(0, n, ROUND):
        base += appends(floor, ROUND, start, batched)
        measured += appends(lm, ROUND, start, batched)
    for lm_ in (lm, floor):
        I.catch_up(lm_)  # (indexed, so the next depth starts with an empty queue)
    return statistics.median(measured) * 1e6, statistics.median(base) * 1e6


def run(kind: str, sizes: list[int], depths: list[int], n: int) -> list[dict[str, float]]:
    rows = []
    with store(kind) as floor:
        install_every_area(floor)
        floor.new_tree("deep " + TEXT, session="deep")
        deepen(floor, depths[0])
        for size in sizes:
            with store(kind) as lm:
                installed = install_every_area(lm)
                t0 = time.perf_counter()
                fill(lm, size)
                lm.new_tree("deep " + TEXT, session="deep")
                built = time.perf_counter() - t0
                print(f"{kind}: store of {size:,} messages built in {built:.0f} s "
                      f"({len(installed)} areas)", file=sys.stderr, flush=True)
                for depth in depths:
                    deepen(lm, depth)
                    one, one_floor = per_append(lm, floor, n, False)
                    many, many_floor = per_append(lm, floor, n, True)
                    row = {"size": size, "depth": depth, "us": one, "floor": one_floor,
                           "us_batched": many, "floor_batched": many_floor}
                    rows.append(row)
                    print(f"  {kind} size {size:>9,} depth {depth:>7,}: {one:8.0f} us "
                          f"(floor {one_floor:8.0f}); 100 per transaction {many:8.0f} us "
                          f"(floor {many_floor:8.0f})", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backends", default="sqlite,postgres")
    ap.add_argument("--sizes", default="0,100000,1000000")
    ap.add_argument("--depths", default="10,1000,10000,100000")
    ap.add_argument("--appends", type=int, default=300)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    depths = [int(d) for d in args.depths.split(",")]
    for kind in args.backends.split(","):
        rows = run(kind, sizes, depths, args.appends)
        print(f"\n{kind}: append to a session, every area installed, median us; floor: "
              f"a {depths[0]:,}-deep session in an empty store, measured in alternating "
              f"rounds beside each row")
        print(f"{'store':>10} {'depth':>8} {'own txn':>9} {'floor':>7} {'ratio':>6} "
              f"{'in txn':>8} {'floor':>7} {'ratio':>6}")
        for r in rows:
            print(f"{r['size']:>10,} {r['depth']:>8,} {r['us']:>9.0f} {r['floor']:>7.0f} "
                  f"{r['us'] / r['floor']:>6.2f} {r['us_batched']:>8.0f} "
                  f"{r['floor_batched']:>7.0f} {r['us_batched'] / r['floor_batched']:>6.2f}")
        worst = rows[-1]
        print(f"goal: {worst['depth']:,} deep in {worst['size']:,} within 1.5x of the floor: "
              f"{worst['us'] / worst['floor']:.2f}x own transaction, "
              f"{worst['us_batched'] / worst['floor_batched']:.2f}x in a transaction")


if __name__ == "__main__":
    main()
