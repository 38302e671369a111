"""The `loomdb` command-line contract: arguments, JSON shapes, exit codes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from test_bad_input import run_cli

ROOT = Path(__file__).resolve().parents[1]


class Cli:
    def __init__(self, db: str) -> None:
        self.db = db

    def __call__(self, *args: str) -> dict:
        code, out, err = run_cli(self.db, *args, "--json")
        assert code == 0, err
        return json.loads(out)


@pytest.fixture
def cli(store_url: str) -> Cli:
    return Cli(store_url)


class TestContract:
    def test_new_add_fork_session_and_path(self, cli: Cli) -> None:
        made = cli("new", "--text", "hello", "--session", "main", "--system", "be kind",
                   "--title", "Greeting")
        assert set(made) == {"tree", "node"}
        a = cli("add", "main", "--role", "assistant", "--text", "hi")["node"]
        assert cli("session", "show", "main") == {"name": "main", "node": a, "tree": made["tree"],
                                                  "selections": {}, "forked_from": None}
        b = cli("add", made["node"], "--role", "assistant", "--text", "hey")["node"]
        assert cli("session", "show", "main")["node"] == a  # a node id moves nothing
        assert cli("fork", "main^", "alt") == {"name": "alt", "node": made["node"]}
        assert cli("path", "main") == {"nodes": [made["node"], a]}
        assert cli("children", made["node"]) == {"nodes": [a, b]}
        assert cli("siblings", a) == {"nodes": [b]}
        assert cli("leaves", made["tree"]) == {"nodes": [a, b]}
        assert cli("branch-points", made["tree"]) == {"nodes": [made["node"]]}
        trees = cli("trees")["trees"]
        assert trees[0]["id"] == made["tree"] and trees[0]["nodes"] == 3
        assert {"id", "title", "mode", "nodes", "created_at"} <= set(trees[0])
        assert trees[0]["title"] == "Greeting"

    def test_edit_select_context_and_verify(self, cli: Cli) -> None:
        root = cli("new", "--text", "t1", "--session", "main")["node"]
        t2 = cli("add", "main", "--role", "assistant", "--text", "t2")["node"]
        cli("add", "main", "--role", "user", "--text", "t3", "--options", '{"temperature": 0.2}')
        t2b = cli("edit", t2, "--text", "t2 edited")["node"]
        cli("select", "main", t2b)
        ctx = cli("context", "main")
        assert [m["content"][0]["text"] for m in ctx["messages"]] == ["t1", "t2 edited", "t3"]
        assert ctx["options"] == {"temperature": 0.2}
        assert cli("versions", t2) == {"nodes": [t2, t2b]}
        assert cli("verify") == {"ok": True, "checked": 4, "broken": []}
        assert cli("show", root)["id"] == root

    def test_overlay_and_link_commands(self, cli: Cli) -> None:
        root = cli("new", "--text", "t1", "--session", "main")["node"]
        a = cli("add", "main", "--role", "assistant", "--text", "a")["node"]
        assert cli("bookmark", a, "answer")["node"] == a
        assert cli("tag", a, "good", "short")["tags"] == ["good", "short"]
        assert cli("exclude", a)["excluded"] is True
        assert cli("prune", a)["pruned"] is True
        other = cli("new", "--text", "other")["node"]
        assert cli("link", a, other, "--type", "link")["target"] == other
        assert cli("link", root, a, "--type", "annotation")["type"] == "annotation"
        assert cli("path", "answer") == {"nodes": [root, a]}

    def test_session_set_with_expect_and_the_log(self, cli: Cli, store_url: str) -> None:
        root = cli("new", "--text", "t1", "--session", "main")["node"]
        a = cli("add", "main", "--role", "assistant", "--text", "a")["node"]
        assert cli("session", "set", "main", root, "--expect", a)["node"] == root
        code, out, err = run_cli(store_url, "session", "set", "main", a, "--expect", a)
        assert code == 2 and "moved" in err
        moves = cli("session", "log", "main")["moves"]
        assert [(m["from"], m["to"]) for m in moves] == [(None, root), (root, a), (a, root)]
        assert cli("session", "undo", "main")["node"] == a
        assert [s["name"] for s in cli("session", "list")["sessions"]] == ["main"]

    def test_verify_exits_1_naming_the_broken_nodes(self, cli: Cli, store_url: str) -> None:
        import loomdb

        cli("new", "--text", "t1", "--session", "main")
        a = cli("add", "main", "--role", "assistant", "--text", "a")["node"]
        with loomdb.open(store_url) as lm:
            lm.backend.execute(f"UPDATE nodes SET author = 'x' WHERE id = '{a}'")
        code, out, _ = run_cli(store_url, "verify", "--json")
        assert code == 1
        assert json.loads(out)["broken"][0]["node"] == a

    def test_readable_output_draws_the_tree_and_the_log(self, cli: Cli, store_url: str) -> None:
        made = cli("new", "--text", "hello there", "--session", "main")
        cli("add", "main", "--role", "assistant", "--text", "general kenobi")
        code, out, _ = run_cli(store_url, "tree", made["tree"])
        assert code == 0 and "general kenobi" in out and "session:main" in out
        code, out, _ = run_cli(store_url, "log", "main")
        assert code == 0 and out.index("hello there") < out.index("general kenobi")


class TestEntryPoint:
    def test_the_installed_command_runs_and_creates_the_store_on_first_use(self, tmp_path: Path) -> None:
        db = tmp_path / "fresh"
        out = subprocess.run(
            [sys.executable, "-m", "loomdb", "--db", str(db), "new", "--text", "hi", "--json"],
            capture_output=True, text=True, check=True,
        )
        assert set(json.loads(out.stdout)) == {"tree", "node"}
        assert (db / "loom.db").exists()

    def test_db_defaults_to_loomdb_home(self, tmp_path: Path) -> None:
        env = {"LOOMDB_HOME": str(tmp_path / "home"), "PATH": ""}
        subprocess.run([sys.executable, "-m", "loomdb", "new", "--text", "hi"],
                       env=env, check=True, capture_output=True, cwd=tmp_path)
        assert (tmp_path / "home" / "loom.db").exists()


def test_every_command_is_documented_in_the_readme() -> None:
    from loomdb.cli import app

    readme = (ROOT / "README.md").read_text("utf-8")
    documented = set(re.findall(r"loomdb (?:--db \S+ )?([a-z][a-z-]+)", readme))
    missing = sorted(set(app.commands) - documented)
    assert not missing, f"undocumented commands: {missing}"


def _module_of(command: click.Command) -> str:
    """The cli module that defines a command or a group (its callback's)."""
    assert command.callback is not None
    return command.callback.__module__.rsplit(".", 1)[1]


def test_the_command_map_names_the_module_of_every_command() -> None:
    from loomdb import cli
    from loomdb.cli import app

    assert {name: _module_of(c) for name, c in app.commands.items()} == cli.COMMANDS
    with click.Context(app) as ctx:
        listed = app.list_commands(ctx)
    assert listed == list(cli.COMMANDS)  # the --help order: plain commands, then groups
    groups = [isinstance(app.commands[name], click.Group) for name in listed]
    assert groups == sorted(groups)


def test_a_short_command_loads_only_what_it_uses(tmp_path: Path) -> None:
    """`loomdb add` imports its command's module and the core, not the other commands,
    the services, the model runtimes, pydantic or typer (start-up time:
    benchmarks/bench_cli.py)."""
    db = str(tmp_path / "store")
    script = (
        "import sys\n"
        "from loomdb.cli import main\n"
        "try:\n"
        f"    main(['--db', {db!r}, 'add', 'main', '--role', 'user', '--text', 'hi'])\n"
        "except SystemExit as done:\n"
        "    assert done.code == 0, done.code\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    subprocess.run([sys.executable, "-m", "loomdb", "--db", db, "new", "--text", "hello",
                    "--session", "main"], check=True, capture_output=True)
    done = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True,
                          text=True)
    loaded = set(done.stdout.split())
    assert {"loomdb.cli.write", "loomdb.loom", "loomdb.store.sqlite"} <= loaded
    heavy = {"loomdb.cli.read", "loomdb.cli.agents", "loomdb.buffer",
             "loomdb.generation", "loomdb.documents", "loomdb.search", "pydantic", "tiktoken",
             "numpy", "torch", "llama_cpp", "fastapi", "psycopg", "typer"}
    assert not heavy & loaded, sorted(heavy & loaded)


def test_threads_run_commands_while_their_modules_load(tmp_path: Path) -> None:
    """main() from several threads of a fresh process at once: their first lookups import
    the command modules concurrently, and every run still finds its command."""
    db = str(tmp_path / "store")
    runs = [["trees"], ["session", "list"], ["verify"], ["path", "s"], ["doc", "list", "--help"],
            ["coll", "--help"], ["agent", "add", "--help"], ["user", "--help"],
            ["gc", "--help"], ["--help"]]
    script = (
        "import sys, threading\n"
        "from loomdb.cli import main\n"
        f"codes, start = [], threading.Barrier({len(runs)})\n"
        "def run(args):\n"
        "    start.wait()\n"
        "    for _ in range(3):\n"
        "        try:\n"
        f"            main(['--db', {db!r}, *args])\n"
        "        except SystemExit as done:\n"
        "            codes.append(done.code)\n"
        f"threads = [threading.Thread(target=run, args=(a,)) for a in {runs!r}]\n"
        "for t in threads: t.start()\n"
        "for t in threads: t.join()\n"
        "print(codes, file=sys.stderr)\n"
    )
    subprocess.run([sys.executable, "-m", "loomdb", "--db", db, "new", "--text", "hello",
                    "--session", "s"], check=True, capture_output=True)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    assert done.stderr.strip() == str([0] * 3 * len(runs)), done.stderr
