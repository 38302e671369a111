"""The size on disk of the environment `make install` builds (every extra and the test
tools), and its largest distributions: what a new user downloads and keeps.

    python benchmarks/footprint.py [VENV]      (default: the running interpreter's)

Target: <= 1 GB (1024 MiB) for the whole environment but the test tools' Claude Agent
SDK, whose wheel bundles Claude Code (about 370 MB; the session store's tests run it,
and `loomdb[all]` leaves it out: a program that uses the SDK has it). Exits 1 over it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

LIMIT_MIB = 1024
#: site-packages entries the target leaves out: test tools too big to count (see above)
TEST_ONLY = ("claude_agent_sdk",)


def size(path: Path) -> int:
    """Bytes of the files under path (a link counts as itself, once)."""
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += (Path(root) / name).lstat().st_size
            except OSError:
                pass
    return total


def by_distribution(site: Path) -> list[tuple[int, str]]:
    """(bytes, name) of each top-level entry of site-packages, largest first."""
    out = [(size(p) if p.is_dir() else p.lstat().st_size, p.name) for p in site.iterdir()]
    return sorted(out, reverse=True)


def main() -> int:
    venv = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(sys.prefix)
    sites = list(venv.glob("lib/python3*/site-packages"))
    total = size(venv)
    apart = sum(size(site / name) for site in sites for name in TEST_ONLY)
    mib = (total - apart) / 2**20
    print(f"environment {venv}: {total / 2**20:.0f} MiB ({total / 1e9:.2f} GB); without "
          f"{', '.join(TEST_ONLY)} ({apart / 2**20:.0f} MiB, test only): {mib:.0f} MiB; "
          f"target <= {LIMIT_MIB} MiB")
    for site in sites:
        for nbytes, name in by_distribution(site)[:12]:
            print(f"  {nbytes / 2**20:7.1f} MiB  {name}")
    return 0 if mib <= LIMIT_MIB else 1


if __name__ == "__main__":
    raise SystemExit(main())
