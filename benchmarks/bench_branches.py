"""The git verbs' costs on SQLite (and PostgreSQL with --postgres URL): `diff` of two
5,000-message paths (goal: 200 ms), a `merge` beside an `append` (goal: 5 ms), and a
replay's own cost per turn (`--no-generate`: the fork and one append a turn; goal:
5 ms) beside an append and beside `generate` with a model that answers at once (an
OpenAI-compatible server on loopback), so what is left of a replay is the model's.

Two diffs: paths that part halfway (2,500 messages shared, 2,500 changed pairs) and
paths of two trees that share nothing (5,000 pairs, every one compared). Wall time,
median of five runs.

    python benchmarks/bench_branches.py [--quick] [--postgres URL]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from common import TEXT, fresh_db, median_time
from rich.console import Console
from rich.table import Table

import loomdb
from loomdb.front import Runtime
from loomdb.providers.config import parse_config
from loomdb.storage_ops import storage

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from loopback_json import json_server  # noqa: E402


def _instant(path: str, headers: Any, asked: Any) -> tuple[int, Any]:
    """A chat completion answered at once: the cheapest real `generate`."""
    return 200, {"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                 "choices": [{"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": "ok"}}]}


@contextmanager
def instant_model() -> Iterator[Runtime]:
    with json_server(_instant) as port:
        config = parse_config({"models": {"instant": {
            "provider": "openai", "model": "m", "api_key_env": "BENCH_KEY", "max_retries": 0,
            "base_url": f"http://127.0.0.1:{port}/v1"}}})
        yield Runtime(config=config).with_environ({"BENCH_KEY": "k"})


def grow(lm: loomdb.Loom, session: str, n: int, word: str, at: str | None = None) -> None:
    """`n` messages on `session` (a new tree, or a fork at `at`), in one transaction."""
    with storage(lm).transaction():
        if at is None:
            lm.new_tree(f"{word} 0 {TEXT[:80]}", session=session)
        else:
            lm.fork(at, session)
        for i in range(1, n):
            lm.append(session, f"{word} {i} {TEXT[:80]}",
                      role="assistant" if i % 2 else "user")


def measure(url: str, n: int, turns: int) -> list[tuple[str, float, str]]:
    rows: list[tuple[str, float, str]] = []
    with loomdb.open(url) as lm, instant_model() as model:
        me = lm.as_(lm.operator, runtime=model).branches
        grow(lm, "main", n, "Message")
        grow(lm, "alt", n // 2 + 1, "Other", at=lm.path("main")[n // 2 - 1])
        grow(lm, "far", n, "Far")
        assert len(lm.path("alt")) == len(lm.path("far")) == n
        rows.append((f"diff, {n:,} + {n:,} messages parting halfway",
                     median_time(lambda: me.diff("main", "alt")), "200 ms"))
        rows.append((f"diff, {n:,} + {n:,} messages of two trees",
                     median_time(lambda: me.diff("main", "far")), "200 ms"))

        count = iter(range(10**6))

        def branch() -> None:
            tip = lm.append(lm.path("main")[-2], f"side {next(count)}", role="assistant")
            state["tip"] = tip.id

        state: dict[str, str] = {}
        rows.append(("append (a user message to a session)",
                     median_time(lambda: lm.append("main", "next", role="user"), 21), ""))
        rows.append(("merge (a branch's tip into that session)",
                     median_time(lambda: me.merge(state["tip"], "main"), 21, before=branch),
                     "5 ms"))

        grow(lm, "turns", 2 * turns, "Turn")
        root = lm.path("turns")[0]
        runs = iter(range(10**6))
        replay = median_time(lambda: me.replay("turns", f"r{next(runs)}", onto=root,
                                               generate=False)) / turns
        rows.append((f"replay --no-generate, per turn ({turns} turns)", replay, "5 ms"))
        rows.append(("generate with a model answering at once, per turn",
                     median_time(lambda: lm.as_(lm.operator, runtime=model).nodes.generate(
                         "turns", models=["instant"]), 11), ""))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1,000-message paths, 20 turns")
    parser.add_argument("--postgres", metavar="URL", help="also on a fresh database there")
    args = parser.parse_args()
    n, turns = (1000, 20) if args.quick else (5000, 100)
    console = Console()
    with tempfile.TemporaryDirectory() as tmp:
        stores = [("SQLite", str(Path(tmp) / "store"))]
        for backend, url in stores:
            show(console, backend, measure(url, n, turns))
    if args.postgres:
        with fresh_db(args.postgres) as url:
            show(console, "PostgreSQL", measure(url, n, turns))


def show(console: Console, backend: str, rows: list[tuple[str, float, str]]) -> None:
    table = Table(title=f"git verbs on {backend} (wall time, median of five or more)")
    for col in ("operation", "time", "goal"):
        table.add_column(col)
    for label, seconds, goal in rows:
        table.add_row(label, f"{seconds * 1e3:.2f} ms", goal)
    console.print(table)


if __name__ == "__main__":
    main()
