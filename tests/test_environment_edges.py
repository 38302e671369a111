"""The environment is read only at the edges (`loomdb.settings`): every module of
`src/loomdb` is parsed, and a read of `os.environ`, `os.getenv` (or `environb`,
`getenvb`, `from os import environ`, an alias of `os`) anywhere but the listed edge
modules fails. The list is pinned both ways: a module that starts reading the
environment fails, and so does a listed edge that stopped (the list says what is true).

Before the settings value, six library modules read it (agents/programs.py,
providers/config.py, providers/clients.py, providers/local.py, store/__init__.py,
store/postgres/opening.py) besides the CLI's nine command modules."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "loomdb"

#: the modules that read the process's environment, each once, into a Settings
EDGES = {
    "cli/__init__.py",  # the `loomdb` command and its serve, gateway and mcp commands
    "api.py",  # `loomdb.open()` / `copy_store()` without settings: the library's entry
}

READS = {"environ", "environb", "getenv", "getenvb"}


def reads(tree: ast.AST) -> list[int]:
    """The lines of a module that read the process's environment."""
    aliases = {"os", "posix", "nt"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases |= {a.asname for a in node.names if a.name in {"os", "posix"} and a.asname}
    found: list[int] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in {"os", "posix", "nt"}:
            found += [node.lineno for a in node.names if a.name in READS]
        elif (isinstance(node, ast.Attribute) and node.attr in READS
              and isinstance(node.value, ast.Name) and node.value.id in aliases):
            found.append(node.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in {"getattr", "__import__"} and any(
                  isinstance(a, ast.Constant) and a.value in READS for a in node.args)):
            found.append(node.lineno)
    return sorted(found)


def readers() -> dict[str, list[int]]:
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        lines = reads(ast.parse(path.read_text("utf-8"), str(path)))
        if lines:
            out[str(path.relative_to(SRC))] = lines
    return out


def test_only_the_edges_read_the_environment() -> None:
    found = readers()
    assert {name: lines for name, lines in found.items() if name not in EDGES} == {}
    assert set(found) == EDGES  # a listed edge that no longer reads leaves the list


def test_each_edge_reads_it_once() -> None:
    assert {name: len(lines) for name, lines in readers().items()} == dict.fromkeys(EDGES, 1)


@pytest.mark.parametrize("source", [
    "import os\nx = os.environ['A']",
    "import os\nx = os.getenv('A')",
    "import os as o\nx = o.environ.get('A')",
    "from os import environ\nx = environ",
    "from os import getenv as g\nx = g('A')",
    "import os\nx = getattr(os, 'environ')",
    "import posix\nx = posix.environ",
])
def test_the_scan_sees_every_way_of_reading(source: str) -> None:
    assert reads(ast.parse(source))


def test_the_scan_passes_a_mapping_handed_down() -> None:
    assert not reads(ast.parse("def f(environ):\n    return environ.get('A')\n"
                               "class S:\n    environ = {}\nS().environ"))


def test_a_call_reads_api_keys_from_the_settings_its_store_was_opened_with(
        tmp_path: Path) -> None:
    """Below the edge, a model call finds its key in the settings handed down (here a
    library program's own), never in the process's environment; an agent's turn too
    (it once read an empty environment, and the local model's thread setting with it)."""
    import loomdb
    from loomdb import ProviderError
    from loomdb.agents.loop import run_turn
    from loomdb.settings import Settings

    toml = tmp_path / "providers.toml"
    toml.write_text('[models.far]\nprovider = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
                    'model = "m"\napi_key_env = "FAR_KEY"\nmax_retries = 0\ntimeout = 2\n')
    config = loomdb.load_providers(toml)
    for environ, keyless in (({}, True), ({"FAR_KEY": "k"}, False)):
        with loomdb.open(tmp_path / f"s{len(environ)}",
                         settings=Settings.from_environ(environ)) as lm:
            for call in (lambda: lm.chat_turn("s", "hello", model="far", config=config),
                         lambda: lm.generate("s", models=["far"], config=config),
                         lambda: run_turn(lm, "s", models=["far"], config=config)):
                with pytest.raises(ProviderError) as caught:
                    call()
                assert ("no API key" in str(caught.value)) is keyless, caught.value
