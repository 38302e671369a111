"""Import benchmark: a generated ChatGPT export into loomdb, beside `json.load` of it.

The export holds N conversations of 50 messages each (a null root, a main thread, and
3 branch points whose alternatives run 3 messages deep), with realistic ChatGPT node
fields. Each measurement runs in a fresh subprocess, so peak RSS
(`resource.getrusage(RUSAGE_SELF).ru_maxrss`) belongs to that job alone:

  * floor:  `json.load` of the whole file (what any importer must at least pay);
  * loomdb: `import_file` into a fresh SQLite store (library call, no CLI).

Times are CPU time of the job (user + system, `time.process_time`), which a shared,
noisy machine disturbs far less than wall time; wall time is shown beside it.

Sizes: 1x = 1,000 conversations (50,000 nodes); 10x = 10,000 conversations. The table
shows wall time, nodes/s, peak RSS and the ratios ours / floor; peak RSS of loomdb
should stay flat from 1x to 10x (the file is streamed) while `json.load` grows.

A second table imports a generated 3 MB Claude Code session (with its subagent,
folded from about 4,000 lines: see `claude_code_session.py`) and shows messages per
second beside `json.loads` of every line of the same bytes.

Then a simonw/llm logs.db of 100,000 messages (`bench_import_llm.py`; 10,000 with
`--quick`): messages/s beside `json.load` of the same content.

    python benchmarks/bench_import.py [--quick] [--reps N] [--no-10x] [--only claude-code|llm]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

MESSAGES = 50
BRANCH_POINTS = 3
BRANCH_DEPTH = 3
WORDS = ("loom warp weft shuttle thread cloth pattern heddle reed beam tension twill "
         "satin plain weave selvedge bobbin yarn spindle dye fiber").split()


def _text(rng: random.Random, n_words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n_words)).capitalize() + "."


def _message(mid: str, role: str, text: str, t: float, model: str | None) -> dict:
    return {
        "id": mid, "author": {"role": role, "name": None, "metadata": {}},
        "create_time": t, "update_time": None,
        "content": {"content_type": "text", "parts": [text]},
        "status": "finished_successfully", "end_turn": role == "assistant", "weight": 1.0,
        "metadata": {"model_slug": model, "finish_details": {"type": "stop"}} if model else {},
        "recipient": "all",
    }


def conversation(rng: random.Random, index: int) -> dict:
    """One conversation: 50 messages, 3 branch points (a checked shape)."""
    main_len = MESSAGES - BRANCH_POINTS * BRANCH_DEPTH
    t0 = 1_700_000_000.0 + index * 3600
    mapping: dict[str, dict] = {}
    root = str(uuid.UUID(int=rng.getrandbits(128)))
    mapping[root] = {"id": root, "message": None, "parent": None, "children": []}

    def add(parent: str, role: str, t: float) -> str:
        mid = str(uuid.UUID(int=rng.getrandbits(128)))
        model = "gpt-4o" if role == "assistant" else None
        words = rng.randint(20, 90) if role == "assistant" else rng.randint(5, 30)
        mapping[mid] = {"id": mid, "message": _message(mid, role, _text(rng, words), t, model),
                        "parent": parent, "children": []}
        mapping[parent]["children"].append(mid)
        return mid

    chain = []
    parent = root
    for i in range(main_len):
        parent = add(parent, "user" if i % 2 == 0 else "assistant", t0 + i * 10)
        chain.append(parent)
    for b in range(BRANCH_POINTS):
        at = chain[(b + 1) * main_len // (BRANCH_POINTS + 1)]
        depth_role = mapping[at]["message"]["author"]["role"]
        parent = at
        for d in range(BRANCH_DEPTH):
            role = "assistant" if (depth_role == "user") == (d % 2 == 0) else "user"
            parent = add(parent, role, t0 + 5000 + b * 100 + d)
    cid = str(uuid.UUID(int=rng.getrandbits(128)))
    return {
        "title": f"Conversation {index}", "create_time": t0, "update_time": t0 + 6000,
        "mapping": mapping, "moderation_results": [], "current_node": chain[-1],
        "plugin_ids": None, "conversation_id": cid, "conversation_template_id": None,
        "gizmo_id": None, "is_archived": False, "safe_urls": [], "default_model_slug": "gpt-4o",
        "id": cid,
    }


def generate(path: Path, conversations: int, seed: int = 7) -> int:
    """Write the export, one conversation at a time; returns its size in bytes."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as fh:
        fh.write("[")
        for i in range(conversations):
            fh.write(",\n" if i else "\n")
            fh.write(json.dumps(conversation(rng, i)))
        fh.write("\n]\n")
    return path.stat().st_size


# ---------------------------------------------------------------- child jobs


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def child(job: str, file: str, store: str | None) -> None:
    if job in ("cc-load", "cc-import"):
        _claude_code_child(job, Path(file), store)
        return
    if job == "load":
        start, cpu = time.perf_counter(), time.process_time()
        with open(file, "rb") as fh:
            data = json.load(fh)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        nodes = sum(sum(1 for n in c["mapping"].values() if n["message"]) for c in data)
        print(json.dumps({"wall": wall, "cpu": cpu, "nodes": nodes, "rss_mb": _peak_mb()}))
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


def _claude_code_child(job: str, folder: Path, store: str | None) -> None:
    if job == "cc-load":
        from claude_code_session import floor

        print(json.dumps({**floor(folder), "rss_mb": _peak_mb()}))
        return
    import loomdb
    from loomdb.interop.importer import import_file

    with loomdb.open(store) as loom:
        start, cpu = time.perf_counter(), time.process_time()
        report = import_file(loom, folder)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert not report.errors, report.errors[:3]
    print(json.dumps({"wall": wall, "cpu": cpu, "nodes": report.nodes,
                      "trees": len(report.trees), "rss_mb": _peak_mb()}))


def claude_code_table(tmp: Path, reps: int) -> Any:
    """Import the generated 3 MB Claude Code session `reps` times beside the floor."""
    from claude_code_session import generate, size_of
    from rich.table import Table

    folder = tmp / "claude-project"
    _, messages = generate(folder)
    floors = [run_child("cc-load", folder) for _ in range(reps)]
    ours = [run_child("cc-import", folder, tmp / f"cc-store-{rep}") for rep in range(reps)]
    assert all(o["nodes"] == messages for o in ours), (ours, messages)
    cpu = statistics.median(o["cpu"] for o in ours)
    floor = statistics.median(f["cpu"] for f in floors)
    table = Table(title="Claude Code session import (a session and its subagent; median CPU s, "
                  "wall s in brackets; peak RSS)")
    for col in ("file MB", "lines", "messages", "json.loads s", "loomdb s", "ratio",
                "messages/s", "json.loads lines/s", "loomdb RSS MB"):
        table.add_column(col, justify="right")
    table.add_row(
        f"{size_of(folder) / 1e6:.1f}", f"{floors[0]['lines']:,}", f"{messages:,}",
        f"{floor:.2f} ({statistics.median(f['wall'] for f in floors):.2f})",
        f"{cpu:.2f} ({statistics.median(o['wall'] for o in ours):.2f})", f"{cpu / floor:.1f}x",
        f"{messages / cpu:,.0f}", f"{floors[0]['lines'] / floor:,.0f}",
        f"{max(o['rss_mb'] for o in ours):.0f}")
    return table


def run_child(job: str, file: Path, store: Path | None = None) -> dict:
    args = [sys.executable, __file__, "--child", job, str(file)]
    if store is not None:
        args.append(str(store))
    done = subprocess.run(args, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- main


def measure(tmp: Path, conversations: int, reps: int) -> dict:
    file = tmp / f"conversations-{conversations}.json"
    size = generate(file, conversations)
    floors, ours = [], []
    for rep in range(reps):
        floors.append(run_child("load", file))
        ours.append(run_child("import", file, tmp / f"store-{conversations}-{rep}"))
    expected = conversations * MESSAGES
    assert all(o["nodes"] == expected for o in ours), (ours, expected)
    cpu = statistics.median(o["cpu"] for o in ours)
    floor = statistics.median(f["cpu"] for f in floors)
    return {
        "conversations": conversations, "mb": size / 1e6, "nodes": expected,
        "cpu": cpu, "floor": floor, "nodes_s": expected / cpu,
        "wall": statistics.median(o["wall"] for o in ours),
        "floor_wall": statistics.median(f["wall"] for f in floors),
        "rss": max(o["rss_mb"] for o in ours), "floor_rss": max(f["rss_mb"] for f in floors),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="100 and 1,000 conversations")
    parser.add_argument("--reps", type=int, default=3, help="repetitions at 1x (10x runs once)")
    parser.add_argument("--no-10x", action="store_true", help="skip the 10x size")
    parser.add_argument("--only", choices=["claude-code", "llm"], help="run one part only")
    args = parser.parse_args()
    if args.child:
        job, file, *rest = args.child
        child(job, file, rest[0] if rest else None)
        return

    from rich.console import Console
    from rich.table import Table

    console = Console(width=160)
    import bench_import_llm  # the logs.db part: a module of its own

    if args.only == "llm":
        bench_import_llm.report(console, quick=args.quick)
        return
    with tempfile.TemporaryDirectory(prefix="loomdb-bench-import-") as tmp:
        console.print(claude_code_table(Path(tmp), max(1, args.reps)))
    if args.only == "claude-code":
        return
    base = 100 if args.quick else 1000
    sizes = [(base, max(1, args.reps))] + ([] if args.no_10x else [(base * 10, 1)])
    results = []
    with tempfile.TemporaryDirectory(prefix="loomdb-bench-import-") as tmp:
        for conversations, reps in sizes:
            results.append(measure(Path(tmp), conversations, reps))
    table = Table(title=f"ChatGPT export import ({MESSAGES} messages, {BRANCH_POINTS} branch "
                  "points per conversation; median CPU s, wall s in brackets; peak RSS)")
    for col in ("conversations", "file MB", "nodes", "json.load s", "loomdb s", "ratio",
                "nodes/s", "json.load RSS MB", "loomdb RSS MB", "RSS ratio"):
        table.add_column(col, justify="right")
    for r in results:
        table.add_row(
            f"{r['conversations']:,}", f"{r['mb']:.1f}", f"{r['nodes']:,}",
            f"{r['floor']:.2f} ({r['floor_wall']:.2f})", f"{r['cpu']:.2f} ({r['wall']:.2f})",
            f"{r['cpu'] / r['floor']:.1f}x", f"{r['nodes_s']:,.0f}",
            f"{r['floor_rss']:.0f}", f"{r['rss']:.0f}", f"{r['rss'] / r['floor_rss']:.2f}x",
        )
    console.print(table)
    if len(results) == 2:
        a, b = results
        console.print(
            f"10x file: loomdb peak RSS {a['rss']:.0f} -> {b['rss']:.0f} MB "
            f"({b['rss'] / a['rss']:.2f}x), json.load {a['floor_rss']:.0f} -> "
            f"{b['floor_rss']:.0f} MB ({b['floor_rss'] / a['floor_rss']:.2f}x); "
            f"loomdb throughput {a['nodes_s']:,.0f} -> {b['nodes_s']:,.0f} nodes/s"
        )

    bench_import_llm.report(console, quick=args.quick)


if __name__ == "__main__":
    main()
