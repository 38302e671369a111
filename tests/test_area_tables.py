"""Areas own their tables: every SQL statement an area's modules hold names only tables
its own migrations create. Another area's data is read through that area's service or
hooks (`loomdb.hooks`), the core's through the Loom.

A read of the source, no database: every string of a module (f-strings with their
holes, `+` chains joined) is scanned for the table after FROM, JOIN, INTO, UPDATE,
TABLE, TRUNCATE, ANALYZE and REFERENCES (a careful tokenizer: quoted literals and
functions skipped, comma lists and common table expressions followed). A name made at
run time (`DELETE FROM {table}`) cannot be read, so a string that *is* the name of a
table (one with a `_`: `nodes` or `contents` is also a plain word) counts as a use
too (the tuples such loops walk). The areas' own migrations are held
the same way, but for the hand-over from the search area's old trigger on `nodes`,
which shipped scripts keep (listed below, and held to be exactly that)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from loomdb.store import areas

SRC = Path(__file__).resolve().parents[1] / "src" / "loomdb"
#: packages holding areas (and the services that have no tables: they hold no SQL)
PACKAGES = ("documents", "collections", "references", "search", "users", "agents",
            "exchanges", "gc", "forget", "shares", "pieces", "integrations.langgraph",
            "integrations.claude_agent_sdk")
#: catalogs and set-returning functions a statement may read
CATALOGS = {"sqlite_master", "pg_trigger", "pg_class", "pg_extension",
            "pg_available_extensions", "generate_series"}
#: (migration, table) pairs of shipped scripts that name a core table: the search
#: area's first script put a trigger on `nodes` and queued its rows; the hand-over
#: queues what a lost trigger missed and drops it. Never to grow.
SHIPPED = {
    ("search/0001_search", "sqlite", "nodes"),
    ("search/0001_search", "postgres", "nodes"),
    ("search/0002_write_hook", "sqlite", "nodes"),
    ("search/0003_write_hook", "postgres", "nodes"),
}

_KEYWORDS = r"FROM|JOIN|INTO|UPDATE|TABLE|TRUNCATE|ANALYZE|REFERENCES"
_AFTER = re.compile(rf"\b({_KEYWORDS})\s+((?:IF\s+(?:NOT\s+)?EXISTS\s+)?)"
                    r"([A-Za-z_{][A-Za-z0-9_{}]*)(\s*\()?")
_MORE = re.compile(r"\s*(?:[A-Za-z_][A-Za-z0-9_]*\s*)?,\s*([A-Za-z_][A-Za-z0-9_]*)(\s*\()?")
_CTE = re.compile(r"(?:\bWITH|,)\s*([A-Za-z_][A-Za-z0-9_]*)\s+AS\s*\(")
_QUOTED = re.compile(r"'(?:[^']|'')*'")
_CREATED = re.compile(r"\bCREATE\s+(?:VIRTUAL\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?\"?(\w+)",
                      re.IGNORECASE)
_NOT_TABLES = {"SELECT", "SET", "SKIP", "OR", "VALUES", "NOTHING", "DO", "LATERAL", "ONLY",
               "ROWS", "IF"}


def tables_named(sql: str) -> set[str]:
    """The tables a statement (or a piece of one) names; `{}` marks a hole."""
    sql = _QUOTED.sub("''", sql)
    local = {m[1].lower() for m in _CTE.finditer(sql)}
    found: set[str] = set()
    for m in _AFTER.finditer(sql):
        keyword, name, call = m[1], m[3], m[4]
        if name.upper() in _NOT_TABLES or name.startswith("{"):
            continue  # a keyword, or a name made at run time
        if call and keyword in ("FROM", "JOIN"):
            continue  # a function: FROM generate_series(...)
        found.add(name)
        if keyword in ("FROM", "JOIN"):
            at = m.end() if not call else m.end()
            while (more := _MORE.match(sql, at)) is not None and not more[2]:
                found.add(more[1])
                at = more.end()
    return {n.lower() for n in found} - local - CATALOGS


def _pieces(node: ast.AST) -> str | None:
    """A string expression's text, a hole for every value made at run time."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _pieces(node.left), _pieces(node.right)
        if left is not None or right is not None:
            return (left or "{}") + (right or "{}")
    return None


def module_strings(path: Path) -> list[str]:
    """Every string expression of a module but its docstrings, outermost first."""
    tree = ast.parse(path.read_text("utf-8"), str(path))
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and n.body and isinstance(n.body[0], ast.Expr)}
    out, inside = [], set()
    for node in ast.walk(tree):
        if id(node) in docs or id(node) in inside:
            continue
        text = _pieces(node)
        if text is not None:
            out.append(text)
            inside.update(id(n) for n in ast.walk(node))
    return out


def created(package: str) -> set[str]:
    """The tables the migrations of the areas declared in a package create (either
    dialect; a table made by a script at run time counts by its prefix)."""
    out: set[str] = set()
    for area in owned(package):
        for dialect in ("sqlite", "postgres"):
            for _, sql in area.scripts(dialect):
                out |= {m[1].lower() for m in _CREATED.finditer(sql)}
    return out


def owned(package: str) -> list[areas.Area]:
    return [a for a in areas.known()
            if a.package == f"loomdb.{package}" or a.package.startswith(f"loomdb.{package}.")]


def core_tables() -> set[str]:
    out: set[str] = set()
    for path in (SRC / "store" / "sql").rglob("*.sql"):
        text = path.read_text("utf-8")
        out |= {m[1].lower() for m in _CREATED.finditer(text)}
        out |= {m.lower() for m in re.findall(r"CREATE\s+VIEW\s+(\w+)", text, re.IGNORECASE)}
    return out


def every_table() -> set[str]:
    return core_tables() | {t for p in PACKAGES for t in created(p)}


def _folder(package: str) -> Path:
    """The folder of a package named from `loomdb` (`integrations.langgraph`)."""
    return SRC.joinpath(*package.split("."))


def _dynamic(package: str, name: str) -> bool:
    """`search_chunk_{}`: the search area's sealed chunks, made by chunks.py."""
    return package == "search" and name.startswith("search_chunk_")


def refused(package: str) -> list[str]:
    mine = created(package)
    everyone = every_table()
    found = []
    for path in sorted(_folder(package).rglob("*.py")):
        for text in module_strings(path):
            named = tables_named(text)
            if "_" in text and text.lower() in everyone:  # a loop's `FROM {table}`
                named.add(text.lower())
            for table in sorted(named - mine):
                if not _dynamic(package, table.replace("{}", "")):
                    found.append(f"{path.relative_to(SRC)}: {table}")
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_an_area_names_only_the_tables_its_migrations_create(package: str) -> None:
    assert refused(package) == []


def test_the_areas_migrations_name_only_their_tables_but_the_shipped_hand_over() -> None:
    found = set()
    for package in PACKAGES:
        mine = created(package)
        for area in owned(package):
            for dialect in ("sqlite", "postgres"):
                for name, sql in area.scripts(dialect):
                    body = "\n".join(line.split("--")[0] for line in sql.splitlines())
                    for table in tables_named(body) - mine:
                        if not _dynamic(package, table.replace("{}", "")):
                            found.add((name, dialect, table))
    assert found == SHIPPED


def test_the_scan_sees_each_areas_sql() -> None:
    """The areas' SQL is found (the scan is not blind), gc holds none (forget's is its
    trash and holds, the retention area)."""
    seen = {p: sum(len(tables_named(t)) for path in _folder(p).rglob("*.py")
                   for t in module_strings(path)) for p in PACKAGES}
    assert all(seen[p] >= 4 for p in ("documents", "collections", "references", "search",
                                      "users", "agents", "exchanges", "shares", "forget",
                                      "integrations.langgraph",
                                      "integrations.claude_agent_sdk")), seen
    assert seen["gc"] == 0
    assert {"nodes", "trees", "ref_log"} <= core_tables()
    assert {"doc_contents", "search_entries", "ref_links", "user_trees"} <= every_table()


def test_the_scan_refuses_what_it_should() -> None:
    assert tables_named("SELECT n.id FROM nodes n JOIN user_trees u ON u.tree_id = n.tree_id"
                        ) == {"nodes", "user_trees"}
    assert tables_named("DELETE FROM doc_contents WHERE id IN (SELECT c.id FROM doc_contents c)"
                        ) == {"doc_contents"}
    assert tables_named("WITH q AS (SELECT 1), hits AS (SELECT 2) SELECT * FROM hits h, q, "
                        "search_entries e") == {"search_entries"}
    assert tables_named("INSERT INTO t VALUES (?) ON CONFLICT (id) DO UPDATE SET a = 1 "
                        "FOR UPDATE SKIP LOCKED") == {"t"}
    assert tables_named("SELECT x FROM generate_series(1, 3) i WHERE y = 'FROM trees'") == set()
    assert tables_named("DELETE FROM {} WHERE id = ?") == set()
