"""`loomdb watch` at 1,000 followed sessions, one of them growing: what a pass costs.

A Claude Code projects folder of `--sessions` session files (each a few turns, as a
finished session leaves it) is imported once by a `Watcher`; then each timed pass
first appends one turn (a user line and a reply line) to one session and runs
`Watcher.step()`. Beside it, the same passes with that one growing file alone in its
folder: the difference is what the other 999 followed files cost a pass (target <= 5
ms). The floor is what any watcher pays to notice a change: listing the folder and
one `lstat` per file (`os.scandir` + `DirEntry.stat`), measured alone.

Times are wall clock, medians of `--ticks` passes.

    python benchmarks/bench_watch.py [--sessions 1000] [--ticks 30]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import loomdb
from loomdb.interop.watch import Watcher


class Session:
    """One Claude Code session file, written line by line."""

    def __init__(self, path: Path, name: str) -> None:
        self.path, self.name, self.n, self.last = path, name, 0, None
        path.parent.mkdir(parents=True, exist_ok=True)

    def line(self, **fields: object) -> None:
        self.n += 1
        uid = f"{self.name}-u{self.n}"
        row = {"parentUuid": self.last, "isSidechain": False, "userType": "external",
               "cwd": "/home/dev/app", "sessionId": self.name, "version": "2.1.3",
               "gitBranch": "main", "uuid": uid,
               "timestamp": f"2026-01-02T{self.n // 3600 % 24:02d}:{self.n // 60 % 60:02d}:"
                            f"{self.n % 60:02d}.000Z", **fields}
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")
        self.last = uid

    def turn(self) -> None:
        self.line(type="user", message={"role": "user", "content": f"question {self.n}"})
        self.line(type="assistant", message={
            "id": f"msg_{self.name}_{self.n}", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "stop_reason": "end_turn",
            "content": [{"type": "text", "text": f"answer {self.n} " + "word " * 40}]})


def floor(folder: Path) -> float:
    """One listing of the folder and an lstat per session file."""
    start = time.perf_counter()
    stack = [str(folder)]
    while stack:
        with os.scandir(stack.pop()) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                elif e.name.endswith(".jsonl"):
                    e.stat(follow_symlinks=False)
    return time.perf_counter() - start


def passes(root: Path, growing: Session, ticks: int) -> list[float]:
    loom = loomdb.open(str(root / "store"))
    watcher = Watcher(loom, root / "projects")
    watcher.step()  # the first pass imports every file (untimed)
    times = []
    for _ in range(ticks):
        growing.turn()
        start = time.perf_counter()
        [done] = watcher.step()
        times.append(time.perf_counter() - start)
        assert done.report.nodes == 2, done.to_json()
    loom.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--ticks", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        many, alone = Path(tmp) / "many", Path(tmp) / "alone"
        sessions = []
        for i in range(args.sessions):
            s = Session(many / "projects" / f"-work-app{i // 100}" / f"s{i:04d}.jsonl", f"s{i:04d}")
            for _ in range(3):
                s.turn()
            sessions.append(s)
        lone = Session(alone / "projects" / "-work-app0" / "s0000.jsonl", "s0000")
        for _ in range(3):
            lone.turn()
        t_many = passes(many, sessions[len(sessions) // 2], args.ticks)
        t_alone = passes(alone, lone, args.ticks)
        t_floor = [floor(many / "projects") for _ in range(args.ticks)]
    m_many, m_alone, m_floor = (statistics.median(t) * 1e3 for t in (t_many, t_alone, t_floor))
    print(f"{args.sessions} followed sessions, one growing by a turn a pass; "
          f"median of {args.ticks} passes (wall clock)")
    print(f"  a pass, {args.sessions} files followed:      {m_many:8.2f} ms")
    print(f"  a pass, the growing file alone:      {m_alone:8.2f} ms")
    print(f"  what the other files cost a pass:    {m_many - m_alone:8.2f} ms   (target <= 5 ms)")
    print(f"  floor: list + lstat {args.sessions} files:   {m_floor:8.2f} ms")


if __name__ == "__main__":
    main()
