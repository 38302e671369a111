"""A 200 MB agent session imports in bounded memory: the peak RSS of a child process
importing a generated 200 MB Codex rollout stays <= 256 MB.

The rollout comes from `benchmarks/codex_session.py` (the real format's shapes, written
from templates in about a second). Most of its bytes are the encrypted reasoning Codex
writes and the import leaves out, so the test runs in seconds; what the import keeps
(command outputs, messages) is held for the conversation being written, and
`benchmarks/bench_import_codex.py` measures a file where that part is large (600 MB).
No time is asserted here.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MB = 1024 * 1024

#: the child's peak is its own address space's high-water mark (VmHWM): `ru_maxrss`
#: carries over an exec the RSS of the process it was forked from (a test worker that
#: had loaded a model read 1.2 GB for an import that peaked at 110 MB)
MEASURE = textwrap.dedent(
    """
    import json, re, sys
    import loomdb
    with loomdb.open(sys.argv[2]) as loom:
        report = loom.import_file(sys.argv[1])
    with open("/proc/self/status") as status:
        peak = int(re.search(r"VmHWM:\\s+(\\d+) kB", status.read()).group(1))
    print(json.dumps({"nodes": report.nodes, "errors": report.errors, "bytes": report.bytes,
                      "peak_kb": peak}))
    """
)


def _generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "codex_session", ROOT / "benchmarks" / "codex_session.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_a_200mb_codex_rollout_imports_in_at_most_256mb(tmp_path: Path) -> None:
    rollout = tmp_path / "rollout-2025-11-17T00-00-00-big.jsonl"
    made = _generator().generate(rollout, 200 * 1000 * 1000, 13_333, reasoning_share=0.95)
    assert made["bytes"] >= 200_000_000
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(rollout), str(tmp_path / "store")],
        capture_output=True, text=True, timeout=300, check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["errors"] == [] and got["nodes"] == made["messages"]
    assert got["bytes"] == made["bytes"]  # the report counts what was read
    peak = got["peak_kb"] * 1024
    print(f"\n{made['bytes'] / 1e6:.0f} MB rollout, {got['nodes']} messages: "
          f"peak RSS {peak / MB:.0f} MiB")
    assert peak <= 256 * MB


HEAP = textwrap.dedent(
    """
    import json, sys, tracemalloc
    import loomdb
    from loomdb.interop import importer
    importer.PART_CHARS = int(sys.argv[3])
    with loomdb.open(sys.argv[2]) as loom:
        loom.import_file(sys.argv[4])  # first a small one: what any import loads, loaded
        tracemalloc.start()
        report = loom.import_file(sys.argv[1])
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    print(json.dumps({"nodes": report.nodes, "errors": report.errors, "peak": peak}))
    """
)


@pytest.mark.slow
def test_a_session_whose_messages_keep_more_than_a_part_holds_is_never_held_whole(
    tmp_path: Path,
) -> None:
    """The other side of the bound: a rollout whose bytes are nearly all command output
    (which the import keeps) holds 12 MB of text, imported in parts of 512 KB: the
    Python heap's peak stays under three quarters of the file (about 6.7 MB; held
    whole, it is more than the whole file: 14.8 MB)."""
    rollout = tmp_path / "rollout-2025-11-17T00-00-00-kept.jsonl"
    made = _generator().generate(rollout, 12 * 1000 * 1000, 800, reasoning_share=0.0)
    small = tmp_path / "small" / "rollout-2025-11-16T00-00-00-small.jsonl"
    small.parent.mkdir()
    _generator().generate(small, 1000 * 1000, 100, reasoning_share=0.0, session="small")
    done = subprocess.run(
        [sys.executable, "-c", HEAP, str(rollout), str(tmp_path / "store"), str(512 * 1024),
         str(small)],
        capture_output=True, text=True, timeout=300, check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["errors"] == [] and got["nodes"] == made["messages"]
    print(f"\n{made['bytes'] / 1e6:.0f} MB of kept output: traced heap peak "
          f"{got['peak'] / MB:.1f} MiB")
    assert got["peak"] < made["bytes"] * 3 / 4
