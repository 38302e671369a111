"""Import benchmark, simonw/llm's logs.db: 100,000 messages into loomdb, beside `json.load`
of the same content.

The logs.db has llm's own schema (made by `llm.migrations.migrate`, so the `llm`
package, a test dependency, must be installed) and is filled the way llm 0.32+ fills
its message store: 1,000 conversation trees of 100 messages each (a system root, 45
user / assistant turns on the main thread and a fork of 9 messages from its middle),
two threads per tree (the main one and the fork) and one turn per answer. The floor is
`json.load` of the same messages and parts written as one JSON document (what reading
them at all costs). Each job runs in a fresh subprocess (CPU time, wall time in
brackets, peak RSS), like `bench_import.py`, which prints this table after its own.

    python benchmarks/bench_import_llm.py [--quick]     (--quick: 10,000 messages)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PER_TREE = 100
FORK_AT = 40
FORK_LEN = 9
WORDS = ("loom warp weft shuttle thread cloth pattern heddle reed beam tension twill "
         "satin plain weave selvedge bobbin yarn spindle dye fiber").split()


def _hash(*parts: str) -> str:
    return "b2:" + hashlib.blake2b("\0".join(parts).encode(), digest_size=16).hexdigest()


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def rows(trees: int, seed: int = 7) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the logs.db: messages, parts, threads, turns."""
    rng = random.Random(seed)
    out: dict[str, list[tuple[Any, ...]]] = {"messages": [], "parts": [], "threads": [],
                                             "turns": []}
    main_len = PER_TREE - FORK_LEN

    def add(parent: str | None, role: str, text: str) -> str:
        h = _hash(parent or "", role, text)
        out["messages"].append((h, parent, role))
        out["parts"].append((h, 0, "text", text))
        return h

    for t in range(trees):
        when = f"2025-01-{1 + t % 28:02d}T10:{t % 60:02d}:00+00:00"
        chain = [add(None, "system", f"System prompt {t}: answer briefly.")]
        for i in range(1, main_len):
            role = "user" if i % 2 else "assistant"
            chain.append(add(chain[-1], role, _text(rng, 12 if role == "user" else 40)))
        fork = [chain[FORK_AT]]
        for i in range(FORK_LEN):
            role = "user" if (FORK_AT + 1 + i) % 2 else "assistant"
            fork.append(add(fork[-1], role, _text(rng, 10)))
        for n, line in enumerate((chain, fork)):
            thread = f"thread-{t}-{n}"
            out["threads"].append((thread, line[-1], f"tree {t}",
                                   f"thread-{t}-0" if n else None, when))
            for k in range(2, len(line), 2):  # the answers (FORK_AT is even: so are the fork's)
                out["turns"].append((f"turn-{thread}-{k}", thread, line[k - 1], line[k],
                                     "echo", 10, 40, 5, when))
    return out


def generate(path: Path, trees: int) -> int:
    """The logs.db, with llm's schema; returns its message count."""
    import sqlite_utils
    from llm.migrations import migrate

    data = rows(trees)
    db = sqlite_utils.Database(path)
    migrate(db)
    conn: sqlite3.Connection = db.conn
    with conn:
        conn.executemany("INSERT INTO messages (hash, parent_hash, role) VALUES (?, ?, ?)",
                         data["messages"])
        conn.executemany("INSERT INTO parts (message_hash, position, type, text) "
                         "VALUES (?, ?, ?, ?)", data["parts"])
        conn.executemany("INSERT INTO threads (id, tip_message_hash, name, forked_from, "
                         "datetime_utc) VALUES (?, ?, ?, ?, ?)", data["threads"])
        conn.executemany("INSERT INTO turns (id, thread_id, parent_message_hash, "
                         "tip_message_hash, model, input_tokens, output_tokens, duration_ms, "
                         "datetime_utc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", data["turns"])
    db.close()
    return len(data["messages"])


def write_json(path: Path, trees: int) -> int:
    """The same messages and parts as one JSON document; returns its size."""
    data = rows(trees)
    texts = {h: text for h, _pos, _kind, text in data["parts"]}
    doc = [{"hash": h, "parent_hash": p, "role": r,
            "parts": [{"type": "text", "text": texts[h]}]} for h, p, r in data["messages"]]
    path.write_text(json.dumps({"messages": doc, "threads": data["threads"]}), encoding="utf-8")
    return path.stat().st_size


# ---------------------------------------------------------------- child jobs


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(job: str, file: str, store: str | None) -> None:
    if job == "load":
        start, cpu = time.perf_counter(), time.process_time()
        with open(file, "rb") as fh:
            data = json.load(fh)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        print(json.dumps({"wall": wall, "cpu": cpu, "nodes": len(data["messages"]),
                          "rss_mb": _peak_mb()}))
        return
    import loomdb
    from loomdb.interop.importer import import_file

    with loomdb.open(store) as loom:
        start, cpu = time.perf_counter(), time.process_time()
        report = import_file(loom, file)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert not report.errors, report.errors[:3]
    print(json.dumps({"wall": wall, "cpu": cpu, "nodes": report.nodes,
                      "trees": len(report.trees), "rss_mb": _peak_mb()}))


def run_child(job: str, file: Path, store: Path | None = None) -> dict[str, Any]:
    args = [sys.executable, __file__, "--child", job, str(file)]
    if store is not None:
        args.append(str(store))
    done = subprocess.run(args, check=True, capture_output=True, text=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def measure(trees: int) -> dict[str, Any] | None:
    try:
        import llm  # noqa: F401
    except ImportError:
        return None
    with tempfile.TemporaryDirectory(prefix="loomdb-bench-llm-") as tmp:
        db, doc = Path(tmp) / "logs.db", Path(tmp) / "logs.json"
        messages = generate(db, trees)
        write_json(doc, trees)
        floor = run_child("load", doc)
        ours = run_child("import", db, Path(tmp) / "store")
        assert ours["nodes"] == messages == floor["nodes"], (ours, messages, floor)
        return {"messages": messages, "trees": ours["trees"], "mb": db.stat().st_size / 1e6,
                "json_mb": doc.stat().st_size / 1e6, "cpu": ours["cpu"], "wall": ours["wall"],
                "floor": floor["cpu"], "floor_wall": floor["wall"], "rss": ours["rss_mb"],
                "floor_rss": floor["rss_mb"]}


def report(console: Any, *, quick: bool = False) -> None:
    """Measure and print the table (used by bench_import.py too)."""
    from rich.table import Table

    result = measure(100 if quick else 1000)
    if result is None:
        console.print("logs.db import: skipped (the llm package, a test dependency, is missing)")
        return
    table = Table(title="simonw/llm logs.db import (trees of 100 messages with a fork; "
                  "CPU s, wall s in brackets; peak RSS)")
    for col in ("messages", "trees", "logs.db MB", "JSON MB", "json.load s", "loomdb s",
                "ratio", "messages/s", "json.load msg/s", "loomdb RSS MB"):
        table.add_column(col, justify="right")
    r = result
    table.add_row(f"{r['messages']:,}", f"{r['trees']:,}", f"{r['mb']:.1f}", f"{r['json_mb']:.1f}",
                  f"{r['floor']:.2f} ({r['floor_wall']:.2f})", f"{r['cpu']:.2f} ({r['wall']:.2f})",
                  f"{r['cpu'] / r['floor']:.1f}x", f"{r['messages'] / r['cpu']:,.0f}",
                  f"{r['messages'] / r['floor']:,.0f}", f"{r['rss']:.0f}")
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="10,000 messages")
    args = parser.parse_args()
    if args.child:
        job, file, *rest = args.child
        child(job, file, rest[0] if rest else None)
        return
    from rich.console import Console

    report(Console(width=160), quick=args.quick)


if __name__ == "__main__":
    main()
