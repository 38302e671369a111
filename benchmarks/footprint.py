"""The size on disk of what `make install` builds, split in two: what `pip install
'loomdb[all]'` brings (loomdb and every distribution its `all` extra needs, found from
the installed distributions' own requirements), and the test tools counted apart (the
`test` extra's distributions beyond those, such as the `claude` binary inside
claude-agent-sdk, and the npm clients of tests/clients/).

    python benchmarks/footprint.py [VENV] [NODE_MODULES...]
        (default: the running interpreter's environment; run it with that venv's python)

Target: loomdb[all] <= 1 GB (1024 MiB). Exits 1 over it.
"""

from __future__ import annotations

import os
import re
import sys
from importlib import metadata
from pathlib import Path

LIMIT_MIB = 1024
MIB = 2**20


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


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", text).lower()


PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def wanted(extra: str) -> list[tuple[str, set[str]]]:
    """loomdb's own requirements with `extra`, as this checkout's pyproject.toml says
    (not the installed metadata, which may be an older checkout's)."""
    import tomllib

    from packaging.requirements import Requirement

    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    out: list[tuple[str, set[str]]] = []
    todo, done = [extra], set()
    lines = list(project["dependencies"])
    while todo:
        name = todo.pop()
        done.add(name)
        for line in extras.get(name, []):
            req = Requirement(line)
            if _name(req.name) == "loomdb":
                todo.extend(e for e in req.extras if e not in done)
            else:
                lines.append(line)
    for line in lines:
        req = Requirement(line)
        out.append((req.name, set(req.extras)))
    return out


def closure(roots: list[tuple[str, set[str]]]) -> set[str]:
    """The installed distributions `roots` need, themselves included."""
    from packaging.requirements import Requirement

    seen: set[str] = {"loomdb"}
    todo = list(roots)
    while todo:
        name, wanted = todo.pop()
        key = (_name(name), frozenset(wanted))
        if key[0] in seen and not wanted:
            continue
        seen.add(key[0])
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        for line in dist.requires or []:
            req = Requirement(line)
            env_ok = [not req.marker or req.marker.evaluate({"extra": e})
                      for e in (wanted or {""})]
            if any(env_ok):
                todo.append((req.name, set(req.extras)))
    return seen


def dist_size(name: str) -> int:
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return 0
    total = 0
    for file in dist.files or []:
        try:
            total += Path(str(dist.locate_file(file))).lstat().st_size
        except OSError:
            pass
    return total


def main() -> int:
    venv = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(sys.prefix)
    node = [Path(p) for p in sys.argv[2:]]
    everything = {_name(d.metadata["Name"]) for d in metadata.distributions()}
    shipped = closure(wanted("all")) & everything
    tools = closure(wanted("test")) & everything - shipped
    sizes = {name: dist_size(name) for name in everything}
    shipped_total = sum(sizes[n] for n in shipped)
    tools_total = sum(sizes[n] for n in tools)
    node_total = sum(size(p) for p in node if p.exists())
    venv_total = size(venv)
    print(f"environment {venv}: {venv_total / MIB:.0f} MiB in all")
    print(f"pip install 'loomdb[all]': {shipped_total / MIB:.0f} MiB "
          f"({len(shipped)} distributions); target <= {LIMIT_MIB} MiB")
    for name in sorted(shipped, key=lambda n: -sizes[n])[:12]:
        print(f"  {sizes[name] / MIB:7.1f} MiB  {name}")
    print(f"test tools, counted apart: {(tools_total + node_total) / MIB:.0f} MiB "
          f"(the test extra's own {tools_total / MIB:.0f} MiB, npm clients "
          f"{node_total / MIB:.0f} MiB)")
    for name in sorted(tools, key=lambda n: -sizes[n])[:8]:
        print(f"  {sizes[name] / MIB:7.1f} MiB  {name}")
    for path in node:
        if path.exists():
            print(f"  {size(path) / MIB:7.1f} MiB  {path}")
    return 0 if shipped_total / MIB <= LIMIT_MIB else 1


if __name__ == "__main__":
    raise SystemExit(main())
