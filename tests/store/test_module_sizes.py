"""The storage layer stays in small modules: each area's store and each dialect's part
is its own module, none over 600 lines (the two backends were one module each of
742 and 842 lines before they were split into packages)."""

from __future__ import annotations

from pathlib import Path

STORE = Path(__file__).resolve().parents[2] / "src" / "loomdb" / "store"


def test_no_storage_module_is_over_600_lines() -> None:
    sizes = {str(p.relative_to(STORE)): len(p.read_text("utf-8").splitlines())
             for p in STORE.rglob("*.py")}
    assert {"sqlite/nodes.py", "postgres/nodes.py", "base.py"} <= set(sizes)
    assert {name: n for name, n in sizes.items() if n > 600} == {}
