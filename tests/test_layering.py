"""Layering by structure: outside the storage modules nothing reaches into the
storage layer (`.backend`) or a private part of the core `Loom`; services use its
public operations. A read of the source (AST), no import needed."""

from __future__ import annotations

import ast
from pathlib import Path

import loomdb.loom

SRC = Path(__file__).resolve().parents[1] / "src" / "loomdb"

#: the storage layer and the core Loom's own parts: they own `backend`
STORAGE = {
    "loom.py", "write_ops.py", "ref_ops.py", "overlay.py", "storage_ops.py", "graph.py",
    "headish.py", "refs.py",
    # a backend-to-backend copy of a whole store, and SQLite's online backup of its
    # connection: storage work by nature
    "transfer.py", "backup.py",
}

#: what the core Loom keeps to itself: its private methods and memories
PRIVATE = {n for n in dir(loomdb.loom.Loom) if n.startswith("_") and not n.startswith("__")}
PRIVATE |= {"_recent", "_sessions", "_anchors"}


def _outside_storage() -> list[Path]:
    files = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC)
        if rel.parts[0] == "store" or str(rel) in STORAGE:
            continue
        files.append(path)
    return files


def _reaches(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if not isinstance(node, ast.Attribute):
            continue
        base = node.value
        own = isinstance(base, ast.Name) and base.id in ("self", "cls")
        if node.attr == "backend" and not own:
            found.append(f"{path.name}:{node.lineno} .backend")
        elif node.attr in PRIVATE and not own:
            found.append(f"{path.name}:{node.lineno} .{node.attr}")
    return sorted(found)


def test_the_walk_sees_the_services() -> None:
    names = {p.name for p in _outside_storage()}
    assert {"generation.py", "buffer.py", "compaction.py", "writer.py", "api.py"} <= names
    assert "_move" in PRIVATE and "_find_tree" in PRIVATE


def test_nothing_outside_storage_touches_the_backend_or_a_private_loom_part() -> None:
    found = [hit for path in _outside_storage() for hit in _reaches(path)]
    assert found == []


def test_the_check_catches_what_it_forbids(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f(loom):\n    loom.backend.refs.get_ref('x')\n    loom._move(1, 2, 3)\n")
    assert sorted(_reaches(bad)) == ["bad.py:2 .backend", "bad.py:3 ._move"]
