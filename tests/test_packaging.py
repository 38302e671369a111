"""What the wheel ships: every area's migrations, by one package-data glob.

setuptools expands each `package-data` pattern with `glob(..., recursive=True)` from
the package's folder (build_py); this expands them the same way and checks every SQL
script and every other data file the package needs is among them, so a new area's
`sql/<dialect>/` folder cannot be left out of the wheel.
"""

from __future__ import annotations

import glob
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "loomdb"


def _patterns() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    return list(config["tool"]["setuptools"]["package-data"]["loomdb"])


def shipped(patterns: list[str], root: Path = SRC) -> set[Path]:
    return {Path(p) for pattern in patterns
            for p in glob.glob(str(root / pattern), recursive=True) if Path(p).is_file()}


def test_every_migration_ships_through_one_glob() -> None:
    scripts = set(SRC.rglob("*.sql"))
    assert len({p.parent.parent.parent for p in scripts}) >= 9  # store and the areas
    sql_patterns = [p for p in _patterns() if p.endswith(".sql")]
    assert len(sql_patterns) == 1, sql_patterns
    assert sorted(str(p.relative_to(SRC)) for p in scripts - shipped(sql_patterns)) == []


def test_the_other_data_files_ship() -> None:
    needed = {SRC / "py.typed", SRC / "search" / "semantic" / "vocab.txt", *(p for p in (SRC / "server" / "static").rglob("*")
                                  if p.is_file())}
    assert sorted(str(p.relative_to(SRC)) for p in needed - shipped(_patterns())) == []


def test_a_new_areas_migrations_are_matched(tmp_path: Path) -> None:
    new = tmp_path / "newarea" / "sql" / "postgres" / "0001_new.sql"
    new.parent.mkdir(parents=True)
    new.write_text("CREATE TABLE n (id text);\n")
    assert shipped([p for p in _patterns() if p.endswith(".sql")], tmp_path) == {new}
