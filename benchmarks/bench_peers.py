"""loomdb beside its closest peer: the `llm` package's content-addressed log store.

Both store a branching message tree in SQLite. Measured in the same run, same texts:
- append N messages one at a time to a named thread (llm: `LogStore.append`; loomdb:
  `Loom.append` through a session);
- read the whole thread back at depth N (llm: `thread_messages`; loomdb: `context`);
- fork at the middle (both O(1));
- edit message 10 of the N-message thread and keep what follows: loomdb writes one
  version node; llm hashes each message over its parent, so keeping the tail means
  re-storing every message after the edit (the cost of `ensure_chain` on the new chain).

    python benchmarks/bench_peers.py [--depth N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import sqlite_utils
from common import TEXT, median_time
from llm.logs import LogStore
from llm.parts import Message, TextPart
from rich.console import Console
from rich.table import Table

import loomdb


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--depth", type=int, default=2000)
    args = parser.parse_args()
    n = args.depth
    texts = [f"{i} {TEXT}" for i in range(n)]
    roles = ["user" if i % 2 == 0 else "assistant" for i in range(n)]
    table = Table(title=f"loomdb vs llm's LogStore, a {n}-message thread (same texts, same run)")
    for col in ("operation", "loomdb", "llm", "llm / loomdb"):
        table.add_column(col, justify="left" if col == "operation" else "right")
    with tempfile.TemporaryDirectory() as tmp:
        loom = loomdb.open(str(Path(tmp) / "loom"))
        store = LogStore(sqlite_utils.Database(str(Path(tmp) / "llm.db")))
        thread = store.create_thread(name="main")

        t0 = time.perf_counter()
        loom.new_tree(texts[0], session="main")
        for text, role in zip(texts[1:], roles[1:], strict=True):
            loom.append("main", text, role=role)
        ours = (time.perf_counter() - t0) / n
        t0 = time.perf_counter()
        for text, role in zip(texts, roles, strict=True):
            store.append(thread, [Message(role=role, parts=[TextPart(text=text)])])
        theirs = (time.perf_counter() - t0) / n
        table.add_row("append one message (own commit)", f"{ours * 1e6:.0f} µs", f"{theirs * 1e6:.0f} µs",
                      f"{theirs / ours:.2f}x")

        head = loom.resolve("main").node
        assert len(loom.context(head)["messages"]) == len(store.thread_messages(thread)) == n
        ours = median_time(lambda: loom.context(head))
        theirs = median_time(lambda: store.thread_messages(thread))
        table.add_row(f"read the thread at depth {n}", f"{ours * 1e3:.1f} ms", f"{theirs * 1e3:.1f} ms",
                      f"{theirs / ours:.2f}x")

        mid = loom.path(head)[n // 2]
        tip = store.thread_tip(thread)
        ours = median_time(lambda: loom.fork(mid, f"f{time.perf_counter_ns()}"), 3)
        theirs = median_time(lambda: store.fork(tip), 3)
        table.add_row("fork", f"{ours * 1e6:.0f} µs", f"{theirs * 1e6:.0f} µs", f"{theirs / ours:.2f}x")

        before = loom.backend.execute("SELECT count(*) FROM nodes")[0][0]
        t0 = time.perf_counter()
        version = loom.edit("main~" + str(n - 11), "message 10, edited")
        loom.select("main", version.id)
        ours = time.perf_counter() - t0
        added = loom.backend.execute("SELECT count(*) FROM nodes")[0][0] - before
        edited = [Message(role=r, parts=[TextPart(text=t)]) for t, r in zip(texts, roles, strict=True)]
        edited[10] = Message(role=roles[10], parts=[TextPart(text="message 10, edited")])
        msgs_before = store.db["messages"].count
        t0 = time.perf_counter()
        store.ensure_chain(edited)
        theirs = time.perf_counter() - t0
        stored = store.db["messages"].count - msgs_before
        table.add_row("edit message 10, keep the rest", f"{ours * 1e3:.2f} ms ({added} node)",
                      f"{theirs * 1e3:.1f} ms ({stored} messages)", f"{theirs / ours:.0f}x")
        loom.close()
    Console(width=140).print(table)


if __name__ == "__main__":
    main()
