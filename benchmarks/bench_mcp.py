"""`loomdb mcp` start-up: time from process start to the `initialize` answer, beside
`python -c pass` and the bare `mcp` SDK server doing nothing.

    python benchmarks/bench_mcp.py [-n 11]

Each server is started as an MCP client starts it (a process over pipes) with the
client's first lines already written, as clients write them: `initialize`, then
`notifications/initialized` and `tools/list`. The clock runs from the spawn to each
answer line; then the input closes and the process exits. `loomdb mcp` (over a store
holding one short conversation) runs twice: with the handshake only, and with one
`tools/call` (`log` of a session) after it, whose answer is timed too: the first call
is where the server loads the SDK and opens the store. `python -c pass` is timed to its
exit. Processes are interleaved, `-n` runs each; the table gives medians of the wall
times, of the CPU time (user + system) of the whole process, steadier than wall time on
a busy machine, and of each initialize time as a ratio of `python -c pass`.

Why it matters: Claude Code in `-p` mode does not wait for a slow server; a server that
has not answered `initialize` by the first request offers that request no tools.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

#: the goal (issue: an agent's client must see the tools on its first request)
TARGET_MS = 300
#: the bare SDK server: the official server class, no tool, over stdio
BARE = ("from mcp.server.mcpserver import MCPServer\n"
        "MCPServer('bare', log_level='WARNING').run('stdio')\n")


def line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message) + "\n").encode()


def opening(call: dict[str, Any] | None) -> list[bytes]:
    """What a client writes at once: the handshake and its listing (and a call)."""
    sent = [line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"}}}),
            line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})]
    if call is not None:
        sent.append(line({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}))
    return sent


def serve(argv: list[str], env: dict[str, str], call: dict[str, Any] | None,
          ) -> dict[str, float]:
    """Seconds from the spawn to each answer (by request id); then stdin closes, and
    the CPU seconds of the whole process."""
    before = _cpu()
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    for sent in opening(call):
        proc.stdin.write(sent)
    proc.stdin.flush()
    want = {0: "initialize", 1: "tools/list"} | ({2: "first call"} if call else {})
    answered: dict[str, float] = {}
    while len(answered) < len(want):
        got = proc.stdout.readline()
        if not got:
            raise SystemExit(f"{argv} closed its output before answering {want}")
        message = json.loads(got)
        if message.get("id") in want:
            if "error" in message or message.get("result", {}).get("isError"):
                raise SystemExit(f"{argv} answered an error: {message}")
            answered[want[message["id"]]] = time.perf_counter() - t0
    proc.stdin.close()
    proc.wait(timeout=60)
    return {**answered, "CPU": _cpu() - before}


def exits(argv: list[str], env: dict[str, str]) -> dict[str, float]:
    before = _cpu()
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, check=True)
    return {"exit": time.perf_counter() - t0, "CPU": _cpu() - before}


def _cpu() -> float:
    """CPU seconds of the children waited for so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=11, help="runs per process")
    args = parser.parse_args()
    env = dict(os.environ)
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        store = str(Path(tmp) / "store")
        subprocess.run([py, "-m", "loomdb", "--db", store, "new", "--text", "hello",
                        "--session", "main"], env=env, check=True, stdout=subprocess.DEVNULL)
        call = {"name": "log", "arguments": {"headish": "main"}}
        loomdb = [py, "-m", "loomdb", "--db", store, "mcp"]
        runs = {
            "python -c pass": lambda: exits([py, "-c", "pass"], env),
            "bare mcp SDK server": lambda: serve([py, "-c", BARE], env, None),
            "loomdb mcp": lambda: serve(loomdb, env, None),
            "loomdb mcp, first call": lambda: serve(loomdb, env, call),
        }
        times: dict[str, list[dict[str, float]]] = {name: [] for name in runs}
        for _ in range(args.n):
            for name, run in runs.items():
                times[name].append(run())
    medians = {name: {k: statistics.median(t[k] for t in ts) for k in ts[0]}
               for name, ts in times.items()}
    floor = medians["python -c pass"]["exit"]
    table = Table(title=f"from process start, median of {args.n} (load average "
                  f"{os.getloadavg()[0]:.2f})")
    for col in ("process", "initialize", "tools/list", "first call", "CPU",
                "initialize / python"):
        table.add_column(col, justify="left" if col == "process" else "right")

    def ms(value: float | None) -> str:
        return "-" if value is None else f"{value * 1e3:.0f} ms"

    for name, got in medians.items():
        first = got.get("initialize", got.get("exit"))
        table.add_row(name if "exit" not in got else f"{name} (to exit)", ms(first),
                      ms(got.get("tools/list")), ms(got.get("first call")), ms(got["CPU"]),
                      f"{first / floor:.1f}x" if first else "-")
    Console().print(table)
    ours = medians["loomdb mcp"]["initialize"] * 1e3
    print(f"target: loomdb mcp answers initialize <= {TARGET_MS} ms from start; "
          f"median {ours:.0f} ms ({'met' if ours <= TARGET_MS else 'NOT met'})")


if __name__ == "__main__":
    main()
