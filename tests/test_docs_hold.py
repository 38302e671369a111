"""Docs that hold: the maps a reader trusts are checked against what exists.

docs/architecture.md's table of modules names every top-level module and package of
`loomdb` and nothing that is gone; the README's layout block names every package and
no missing file; `errors.py`'s drawn hierarchy is the class tree. Each is read as
text (no import of the edges), so a new module, package or error fails here until
its map says where it sits.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "loomdb"

#: a file or folder named in a map: `name.py` or `name/`, standing alone
_PATH = re.compile(r"(?<![\w/.`-])((?:[\w]+/)*(?:\w+\.py|\w+/))(?![\w/])")


def top_level() -> set[str]:
    """Every module (`name.py`) and package (`name/`) directly under loomdb."""
    return ({p.name for p in SRC.glob("*.py") if p.name != "__init__.py"}
            | {f"{p.parent.name}/" for p in SRC.glob("*/__init__.py")})


def _named(tokens: list[str], base: Path) -> tuple[set[str], list[str]]:
    """(top-level names a row names, names that exist nowhere). A bare name resolves at
    `base`, or inside a folder named earlier in the same row (`store/base.py nodes.py`)."""
    tops: set[str] = set()
    missing = []
    folders = [base]
    for token in tokens:
        found = next((f / token for f in reversed(folders) if (f / token).exists()), None)
        if found is None:
            missing.append(token)
            continue
        if found.parent == SRC:
            tops.add(token)
        elif found.is_relative_to(SRC):
            tops.add(found.relative_to(SRC).parts[0] + "/")
        folders.append(found if token.endswith("/") else found.parent)
    return tops, missing


def _table_rows(text: str, heading: str) -> list[str]:
    """The first cells of the table right under `heading`."""
    section = text.split(heading, 1)[1]
    rows = []
    for line in section.splitlines()[1:]:
        if line.startswith("#"):
            break
        if line.startswith("| `"):
            rows.append(line.split(" | ", 1)[0])
        elif rows and not line.startswith("|"):
            break
    return rows


def test_the_architecture_table_maps_every_module_and_package() -> None:
    rows = _table_rows((ROOT / "docs" / "architecture.md").read_text("utf-8"), "## Layers")
    assert len(rows) > 20
    named: set[str] = set()
    missing: list[str] = []
    for cell in rows:
        tops, gone = _named(re.findall(r"`([^`]+)`", cell), SRC)
        named |= tops
        missing += gone
    assert missing == [], "the table names what does not exist"
    assert sorted(top_level() - named) == [], "the table does not name these"


def _layout_block() -> list[str]:
    text = (ROOT / "README.md").read_text("utf-8")
    block = text.split("## Layout", 1)[1].split("```", 2)[1]
    return block.splitlines()[1:]


def test_the_readme_layout_names_every_package_and_nothing_missing() -> None:
    lines = _layout_block()
    assert lines[0] == "src/loomdb/"
    named: set[str] = set()
    missing: list[str] = []
    for line in lines[1:]:
        inside = line.startswith("  ")
        # the paths come first on a line, the words saying what they hold after
        paths = re.split(r"\s{3,}", line.strip(), maxsplit=1)[0]
        tokens = _PATH.findall(paths)
        tops, gone = _named(tokens, SRC if inside else ROOT)
        named |= tops
        missing += gone
    assert missing == [], "the layout names what does not exist"
    packages = {name for name in top_level() if name.endswith("/")}
    assert sorted(packages - named) == [], "the layout does not name these packages"


def _drawn() -> list[tuple[int, str]]:
    """(depth, class) for each line of the drawing in errors.py's docstring."""
    doc = ast.get_docstring(ast.parse((SRC / "errors.py").read_text("utf-8"))) or ""
    out = []
    for line in doc.splitlines():
        m = re.match(r"^    ((?:[│ ]   )*)(?:[├└]── )?([A-Z]\w+)(?=\s)", line)
        if m:
            depth = len(m.group(1)) // 4 + (1 if "──" in line else 0)
            out.append((depth, m.group(2)))
    return out


def _parents_drawn() -> dict[str, str | None]:
    parents: dict[str, str | None] = {}
    stack: list[str] = []
    for depth, name in _drawn():
        del stack[depth:]
        parents[name] = stack[-1] if stack else None
        stack.append(name)
    return parents


def _parents_defined() -> dict[str, str | None]:
    """Each error class of errors.py -> its first base that is one of ours."""
    tree = ast.parse((SRC / "errors.py").read_text("utf-8"))
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    ours = {c.name for c in classes}
    out: dict[str, str | None] = {}
    for c in classes:
        bases = [b.id for b in c.bases if isinstance(b, ast.Name) and b.id in ours]
        out[c.name] = bases[0] if bases else None
    return out


def test_the_drawn_error_hierarchy_is_the_class_tree() -> None:
    drawn = _parents_drawn()
    assert drawn["LoomError"] is None and drawn["AmbiguousName"] == "NotFound"
    assert drawn == _parents_defined()


def test_the_checks_see_what_they_hold(tmp_path: Path) -> None:
    assert "content.py" in top_level() and "store/" in top_level()
    assert _named(["store/", "base.py", "sql/", "nope.py"], SRC) == ({"store/"}, ["nope.py"])
    assert _named(["server/", "users/"], SRC) == ({"server/", "users/"}, [])
    assert _PATH.findall("generation.py buffer.py interop/") == [
        "generation.py", "buffer.py", "interop/"]
    assert _PATH.findall("store/  base.py sqlite.py sql/") == [
        "store/", "base.py", "sqlite.py", "sql/"]
