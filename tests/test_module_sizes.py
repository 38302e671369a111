"""Every module of `src/loomdb` stays small: none over 600 lines, each named for what
it holds. (The two backends were one module each of 742 and 842 lines before they
were split into packages; the core `loom.py` (742) lost its writes to `write_ops.py`,
and `buffer.py` (699) became a package of drafts, the document, looming, span edits
and navigation.)"""

from __future__ import annotations

from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "loomdb"
LIMIT = 600


def sizes() -> dict[str, int]:
    return {str(p.relative_to(SRC)): len(p.read_text("utf-8").splitlines())
            for p in SRC.rglob("*.py")}


def test_no_module_is_over_600_lines() -> None:
    found = sizes()
    assert {"loom.py", "write_ops.py", "buffer/drafts.py", "store/sqlite/nodes.py",
            "store/postgres/nodes.py", "store/base.py"} <= set(found)
    assert {name: n for name, n in found.items() if n > LIMIT} == {}
