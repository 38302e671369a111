"""No import cycles between modules, function-local imports included, and every
top-level module of `loomdb` placed in the layers contract.

import-linter's layers contract sees imports at any depth, but a cycle inside one
layer (`:` siblings, or two modules of one package) passes it; a function-local
import can hide such a cycle from a reader too. This reads the source (AST), so an
import inside a function counts like one at the top; imports under `if TYPE_CHECKING:`
do not run and are left out.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "loomdb"


def _modules(src: Path) -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package) for every module under `src`."""
    out = {}
    for path in sorted(src.rglob("*.py")):
        parts = list(path.relative_to(src.parent).with_suffix("").parts)
        package = parts[-1] == "__init__"
        if package:
            parts.pop()
        out[".".join(parts)] = (path, package)
    return out


def _type_checking_only(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                skip.update(id(n) for n in ast.walk(stmt))
    return skip


def import_graph(src: Path) -> dict[str, dict[str, int]]:
    """module -> {module it imports: first line}, over every import in the file."""
    mods = _modules(src)
    graph: dict[str, dict[str, int]] = {}
    for name, (path, package) in mods.items():
        tree = ast.parse(path.read_text("utf-8"), str(path))
        skip = _type_checking_only(tree)
        here = name if package else name.rpartition(".")[0]
        deps: dict[str, int] = {}
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")[: len(here.split(".")) - node.level + 1]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                # `from pkg import sub` imports the submodule; `from mod import name` the module
                targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in mods else mod
                           for a in node.names]
            for target in targets:
                if target in mods and target != name:
                    deps.setdefault(target, node.lineno)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each as
    one cycle through it, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # recursion depth is bounded by the module count
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(_one_cycle(graph, set(comp)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def _one_cycle(graph: dict[str, dict[str, int]], comp: set[str]) -> list[str]:
    """A path a -> ... -> a inside one component, to name in a failure."""
    start = min(comp)
    paths = {start: [start]}
    todo = [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(graph[v]):
            if w == start:
                return [*paths[v], start]
            if w in comp and w not in paths:
                paths[w] = [*paths[v], w]
                todo.append(w)
    raise AssertionError(f"no cycle through {start}")  # a component always has one


def _shown(graph: dict[str, dict[str, int]], cycle: list[str]) -> str:
    return " -> ".join(f"{a} (l.{graph[a][b]})" for a, b in zip(cycle, cycle[1:], strict=False)) \
        + f" -> {cycle[-1]}"


def test_no_import_cycles_counting_function_local_imports() -> None:
    graph = import_graph(SRC)
    assert [_shown(graph, c) for c in cycles(graph)] == []


def test_the_walk_finds_a_cycle_hidden_in_a_function(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..a import x\n    return x\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\n"
                              "if TYPE_CHECKING:\n    from . import a\n")
    graph = import_graph(pkg)
    assert graph["pkg.a"] == {"pkg.sub.b": 1}
    assert graph["pkg.sub.b"] == {"pkg.a": 2}
    assert graph["pkg.c"] == {}
    assert cycles(graph) == [["pkg.a", "pkg.sub.b", "pkg.a"]]
    assert _shown(graph, cycles(graph)[0]) == "pkg.a (l.1) -> pkg.sub.b (l.2) -> pkg.a"


def _layered() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    layers = [layer for c in contracts if c["type"] == "layers" for layer in c["layers"]]
    return {m for layer in layers for m in re.findall(r"loomdb\.(\w+)", layer)}


def top_level() -> set[str]:
    """Every module and package directly under loomdb (but its own __init__)."""
    return {p.stem for p in SRC.glob("*.py") if p.stem != "__init__"} | {
        p.parent.name for p in SRC.glob("*/__init__.py")}


def test_every_top_level_module_sits_in_a_layer() -> None:
    assert sorted(top_level() - _layered()) == []
    assert {"content", "store", "cli", "__main__"} <= top_level()
