"""CLI start-up: a whole `loomdb add` process beside `python -c pass` and the `llm` CLI.

Each command runs as its own process, N times, interleaved; the table gives the median
wall time and the median CPU time (user + system, of the child: steadier than wall time
on a busy machine) per process, and `loomdb add` as a ratio of each peer (target: 8x
`python -c pass`). Run it where Python may cache bytecode: with PYTHONDONTWRITEBYTECODE
set (and no cache from an install) every run compiles loomdb's modules again, about a
third of `loomdb add` (196 against 132 ms CPU measured side by side). Of what remains,
the tokenizer that counts the message's tokens takes about 20 ms to build (rs-bpe's
cl100k_base, once per process). `llm` logs a
prompt only through a model; what it does here offline is `llm logs -n 1` (start the
CLI, open its SQLite log, read a row), the nearest thing to one small write.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table


def run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=21, help="processes per command")
    args = parser.parse_args()
    bindir = Path(sys.executable).parent
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "LLM_USER_PATH": str(Path(tmp) / "llm")}
        store = str(Path(tmp) / "store")
        loomdb = [str(bindir / "loomdb"), "--db", store]
        subprocess.run([*loomdb, "new", "--text", "hello", "--session", "main"], env=env,
                       check=True, stdout=subprocess.DEVNULL)
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "loomdb add": [*loomdb, "add", "main", "--role", "user", "--text", "one more line"],
        }
        llm = shutil.which("llm", path=str(bindir)) or shutil.which("llm")
        if llm:  # its log database, made by llm's own migrations
            logs = Path(env["LLM_USER_PATH"]) / "logs.db"
            logs.parent.mkdir()
            subprocess.run([sys.executable, "-c", "import sys, sqlite_utils; "
                            "from llm.migrations import migrate; "
                            "migrate(sqlite_utils.Database(sys.argv[1]))", str(logs)],
                           env=env, check=True)
            commands["llm logs -n 1"] = [llm, "logs", "-n", "1"]
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.n):
            for name, argv in commands.items():
                times[name].append(run(argv, env))
    medians = {name: (statistics.median(w for w, _ in t), statistics.median(c for _, c in t))
               for name, t in times.items()}
    ours_wall, ours_cpu = medians["loomdb add"]
    table = Table(title=f"one process each, median of {args.n} (load average "
                  f"{os.getloadavg()[0]:.2f})")
    for col in ("command", "wall", "CPU", "loomdb add / this (wall)", "(CPU)"):
        table.add_column(col, justify="right" if col != "command" else "left")
    for name, (wall, cpu) in medians.items():
        table.add_row(name, f"{wall * 1e3:.0f} ms", f"{cpu * 1e3:.0f} ms",
                      f"{ours_wall / wall:.2f}x", f"{ours_cpu / cpu:.2f}x" if cpu else "-")
    Console().print(table)
    base_wall, base_cpu = medians["python -c pass"]
    print(f"target: loomdb add <= 8x python -c pass; wall {ours_wall / base_wall:.2f}x, "
          f"CPU {ours_cpu / base_cpu:.2f}x (bytecode "
          f"{'not written' if os.environ.get('PYTHONDONTWRITEBYTECODE') else 'cached'})")


if __name__ == "__main__":
    main()
