"""Import benchmark of hostile files (issue 32, work budgets): each hostile file beside a
well-formed file of about the same size, imported as an upload is (no file beside it
read, the store's limits and time budget), each in a fresh subprocess: wall time and
how much the process's peak memory grew during the import.

The files (made by `tests/security/hostile_files.py`, which the tests use at small
sizes):

* a Codex rollout, a Claude Code and a pi session whose values are small as JSON and large
  as Python objects (held whole they took ~50 times the file), beside ordinary ones;
* a ChatGPT export zip of 16 KB whose 60 image pointers name one 16 MB member (each
  pointer decompressed it again), beside one whose pointers name 60 small members;
* a simonw/llm logs.db without llm's indexes (a tree's rows found by scanning), beside
  the same rows with them, and one whose hashes are all stored twice (refused).

    python benchmarks/bench_hostile_imports.py [--quick]   (--quick: smaller files)
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "security"))

MB = 1024 * 1024


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(file: str, store: str) -> None:
    """Import `file` as an upload is; print wall time, peak growth and what it did."""
    import loomdb
    from format_samples import made
    from loomdb.errors import LoomError
    from loomdb.interop.importer import import_file

    with loomdb.open(store + "-warm") as warm:  # the import's modules loaded, not counted
        for sample in made(Path(store + "-samples")).values():
            import_file(warm, sample, files=None)
    with loomdb.open(store) as loom:
        base = _peak_mb()
        start = time.perf_counter()
        try:
            report = import_file(loom, file, files=None, seconds=loom.limits.import_seconds)
            said = f"{report.nodes} nodes, {len(report.errors)} errors"
            if report.errors:
                said += f" ({report.errors[0]['reason'][:50]})"
        except LoomError as exc:
            said = f"refused: {str(exc)[:90]}"
        wall = time.perf_counter() - start
    print(json.dumps({"wall": wall, "grew_mb": _peak_mb() - base, "said": said}))


def run_child(file: Path, store: Path) -> dict[str, Any]:
    done = subprocess.run([sys.executable, __file__, "--child", str(file), str(store)],
                          check=True, capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT / "src")})
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def cases(tmp: Path, quick: bool) -> list[tuple[str, Path, Path]]:
    """(what, hostile file, well-formed file of about its size)."""
    from hostile_files import (
        chatgpt_zip,
        claude_code_session,
        codex_rollout,
        llm_logs,
        pi_session,
    )

    size = (2 if quick else 9) * MB
    member = (4 if quick else 16) * MB
    roots = 2_000 if quick else 20_000
    return [
        ("Codex rollout", codex_rollout(tmp / "codex-h.jsonl", size, hostile=True),
         codex_rollout(tmp / "codex-w.jsonl", size, hostile=False)),
        ("Claude Code session", claude_code_session(tmp / "cc-h.jsonl", size, hostile=True),
         claude_code_session(tmp / "cc-w.jsonl", size, hostile=False)),
        ("pi session", pi_session(tmp / "pi-h.jsonl", size, hostile=True),
         pi_session(tmp / "pi-w.jsonl", size, hostile=False)),
        ("ChatGPT zip, 60 pointers", chatgpt_zip(tmp / "cg-h.zip", member, 60, hostile=True),
         chatgpt_zip(tmp / "cg-w.zip", member, 60, hostile=False)),
        ("llm logs.db, no index", llm_logs(tmp / "llm-h.db", roots),
         llm_logs(tmp / "llm-w.db", roots, hostile=False)),
        ("llm logs.db, hashes twice", llm_logs(tmp / "llm-d.db", roots // 2, duplicates=True),
         llm_logs(tmp / "llm-w2.db", roots, hostile=False)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", nargs=2)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Hostile imports beside well-formed files of about the same size "
                  "(wall s; peak memory growth MB)")
    for column in ("file", "bytes", "hostile", "well-formed", "hostile: what it did"):
        table.add_column(column)
    with tempfile.TemporaryDirectory(prefix="loomdb-bench-hostile-") as folder:
        tmp = Path(folder)
        for number, (what, hostile, fine) in enumerate(cases(tmp, args.quick)):
            bad = run_child(hostile, tmp / f"store-h{number}")
            good = run_child(fine, tmp / f"store-w{number}")
            table.add_row(what, f"{hostile.stat().st_size:,} / {fine.stat().st_size:,}",
                          f"{bad['wall']:.2f} s, +{bad['grew_mb']:.0f} MB",
                          f"{good['wall']:.2f} s, +{good['grew_mb']:.0f} MB", bad["said"])
    Console(width=170).print(table)


if __name__ == "__main__":
    main()
