"""A user's search among other users' matches: what filtering in the query buys.

    python benchmarks/bench_search_scope.py [--backends sqlite,postgres] [--users 10]
        [--matches 2000] [--modes text] [--repeat 15]

A store with `--users` users of `--matches` matching messages each (short messages
that all say the word, so every user's hits compete), plus one user, `few`, whose
five matches are long messages that rank below everyone's. Each user's search for the
word, `limit 20`, is timed `--repeat` times after a warm-up (the index is built
first); the report is the median per user kind and whether the page was full (20
hits, or all five of `few`'s). Run it against another tree's code with
`PYTHONPATH=OTHER/src` to compare: before the scope went into the query, a user's
hits were filtered after the ranking, fetched ever deeper up to the best 1,000 of
the store. On SQLite the full-text statement's plan is printed too.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import loomdb  # noqa: E402
from loomdb.users import Owner, add_user, authenticate  # noqa: E402

WORD = "marmalade"
FILLER = ("apple", "bread", "cheese", "garden", "harbour", "lantern", "meadow",
          "orchard", "pepper", "river", "saddle", "thimble", "velvet", "willow")


def _user(loom: loomdb.Loom, name: str) -> Owner:
    _, token = add_user(loom, name)
    user = authenticate(loom, token)
    assert user is not None
    return Owner(loom, user)


def build(loom: loomdb.Loom, users: int, matches: int) -> dict[str, Owner]:
    found = {}
    for u in range(users):
        who = _user(loom, f"user{u}")
        loom.as_(who).trees.new(f"{WORD} {FILLER[u % len(FILLER)]}", session=f"s{u}")
        for i in range(matches - 1):
            loom.append(f"s{u}", f"{WORD} {FILLER[(u + i) % len(FILLER)]} {i}")
        found[f"user{u}"] = who
    few = _user(loom, "few")
    long = " ".join(FILLER * 6)
    loom.as_(few).trees.new(f"{long} {WORD} one", session="few")
    for i in range(4):
        loom.append("few", f"{long} {WORD} {i}")
    found["few"] = few
    return found


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def median_ms(call: object, repeat: int) -> tuple[float, int]:
    times, n = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        n = len(call())  # type: ignore[operator]
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), n


def plan(loom: loomdb.Loom) -> None:
    """SQLite's plan of the scoped full-text statement."""
    from loomdb.search import SEARCH
    from loomdb.search import service as S

    try:
        from loomdb.search.sqlite import scoped
        from loomdb.search.storage import Scope, filters
    except ImportError:
        print("  (no scoped statement in this tree)")
        return
    where, args = filters(S.Query(WORD), None, "e")
    seen, values = scoped(Scope(frozenset({"x"})), "e")
    sql = ("EXPLAIN QUERY PLAN SELECT e.entity FROM search_text JOIN search_entries e "
           "ON e.seq = search_text.rowid WHERE search_text MATCH ?" + where + seen +
           " ORDER BY bm25(search_text) LIMIT ?")
    with loom.unit(SEARCH) as db:
        for row in db.execute(sql, [WORD, *args, *values, 20]):
            print("   ", row[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backends", default="sqlite")
    ap.add_argument("--users", type=int, default=10)
    ap.add_argument("--matches", type=int, default=2000)
    ap.add_argument("--modes", default="text")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--store", help="build (or, when it has users, reuse) this store: "
                    "time two trees' code on the same data, one after the other")
    args = ap.parse_args()
    if args.store:
        timed(args.store, args)
        return
    print(f"loomdb from {Path(loomdb.__file__).parent}")
    for backend in args.backends.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            if backend == "sqlite":
                url, ctx = str(Path(tmp) / "store"), _nothing()
            else:
                from pg import fresh_postgres_url

                ctx = fresh_postgres_url()
                base = ctx.__enter__()
                url = base + ("&" if "?" in base else "?") + f"blobs=file://{tmp}/blobs"
            try:
                with loomdb.open(url) as loom:
                    start = time.perf_counter()
                    users = build(loom, args.users, args.matches)
                    loom.search(WORD)  # index everything before timing
                    print(f"{backend}: {args.users} users x {args.matches} matches + few "
                          f"(built and indexed in {time.perf_counter() - start:.0f} s)")
                    for mode in args.modes.split(","):
                        if mode != "text":
                            loom.search(WORD, mode=mode)  # embed before timing
                        for kind, who in (("a user of 2,000", users["user0"]),
                                          ("few (5 low-ranked)", users["few"])):
                            door = loom.as_(who)
                            ms, n = median_ms(lambda d=door, m=mode: d.search(
                                WORD, mode=m, limit=20), args.repeat)
                            print(f"  {mode:8} {kind:20} median {ms:8.1f} ms, {n} hits")
                    if backend == "sqlite":
                        plan(loom)
            finally:
                if backend != "sqlite":
                    ctx.__exit__(None, None, None)


def timed(url: str, args: argparse.Namespace) -> None:
    """Build the store at `url` once (when it has no users), then time."""
    from loomdb.users import list_users

    with loomdb.open(url) as loom:
        users = {u.name: Owner(loom, u) for u in list_users(loom)}
        if not users:
            users = build(loom, args.users, args.matches)
            loom.search(WORD)
        print(f"{url}: {len(users) - 1} users + few")
        for mode in args.modes.split(","):
            loom.search(WORD, mode=mode)  # (indexed and embedded before timing)
            for kind, who in (("a user of 2,000", users["user0"]),
                              ("few (5 low-ranked)", users["few"])):
                door = loom.as_(who)
                ms, n = median_ms(lambda d=door, m=mode: d.search(WORD, mode=m, limit=20),
                                  args.repeat)
                print(f"  {mode:8} {kind:20} median {ms:8.1f} ms, {n} hits")


if __name__ == "__main__":
    main()
