"""The `loomdb` command: a thin layer over the library, one command -> one call.

    loomdb [--db PATH|URL] COMMAND ARGS... [--json]

This package is the only place (with the HTTP server) that reads the environment,
prints, or exits. Library errors become exit code 2 with a one-line message on
stderr, or `{"error": ...}` on stdout when `--json` was given; nothing is written.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import TYPE_CHECKING, Any

import click
import typer

from ..errors import LoomError, UsageError

if TYPE_CHECKING:
    from ..api import Loom

root = typer.Typer(
    name="loomdb",
    help="Git for LLM conversations: branch, fork, edit, and assemble context.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


class State:
    """What every command shares: where the store is, opened on first use."""

    def __init__(self, db: str | None) -> None:
        self.db = db
        self._loom: Loom | None = None

    @property
    def loom(self) -> Loom:
        """The store, opened (and migrated) on first use: `--help` never opens it."""
        if self._loom is None:
            from ..api import open as open_store

            self._loom = open_store(self.db)
        return self._loom

    def close(self) -> None:
        """Close the store if a command opened it (its connections and pools with it,
        rather than whenever the garbage collector gets to them)."""
        if self._loom is not None:
            self._loom.close()
            self._loom = None


@root.callback()
def _root(
    ctx: typer.Context,
    db: str = typer.Option(
        None, "--db", envvar="LOOMDB_URL",
        help="Store folder, sqlite:///file or postgresql:// URL "
        "(default: $LOOMDB_HOME, else ./.loomdb/).",
    ),
) -> None:
    import os

    state = State(db or os.environ.get("LOOMDB_HOME") or ".loomdb")
    ctx.obj = state
    ctx.call_on_close(state.close)


def loom(ctx: typer.Context) -> Loom:
    """The store every command works on (see State)."""
    state = ctx.find_object(State)
    assert state is not None
    return state.loom


def emit(as_json: bool, value: Any, text: str | None = None) -> None:
    """Print a result: JSON when asked, else the readable text (or JSON as a fallback)."""
    if as_json or text is None:
        typer.echo(json.dumps(value, ensure_ascii=False, indent=None if as_json else 2))
    else:
        typer.echo(text)


JSON = typer.Option(False, "--json", help="Print machine-readable JSON.")

#: the modules that define the commands, in the order `--help` lists them
MODULES = ("write", "refs", "read", "models", "buffer", "interop", "admin", "docs", "colls",
           "references", "search", "gc", "agents", "serve", "gateway", "mcp")
#: which module defines each command and command group (tests/test_cli.py holds this to
#: the modules): a call imports its command's module only, since importing and building
#: every command costs a third of a short command's run
COMMANDS = {
    **dict.fromkeys(("new", "add", "edit", "select", "link", "bookmark", "tag", "exclude",
                     "prune", "rename"), "write"),
    **dict.fromkeys(("fork", "session", "view"), "refs"),
    **dict.fromkeys(("path", "children", "siblings", "versions", "leaves", "branch-points",
                     "edges", "show", "log", "tree", "trees", "archive", "verify"), "read"),
    **dict.fromkeys(("context", "generate", "compact", "chat"), "models"),
    "buffer": "buffer", "import": "interop", "export": "interop", "migrate": "admin",
    "backup": "admin", "doc": "docs", "coll": "colls", "backlinks": "references",
    "search": "search", "gc": "gc",
    **dict.fromkeys(("pending", "approve", "deny", "route", "spawn", "propose", "inbox",
                     "reject", "amend", "agent", "persona"), "agents"),
    "serve": "serve", "user": "serve", "gateway": "gateway", "mcp": "mcp",
}


def load(args: list[str]) -> str | None:
    """Register the command `args` names (its module) and return its name, or register
    every command and return None when `args` names none that is known (`--help`, a
    mistake: click lists or refuses them all)."""
    import importlib

    rest = iter(args)
    for arg in rest:
        if arg == "--db":
            next(rest, None)
        elif not arg.startswith("-"):
            if arg in COMMANDS:
                importlib.import_module(f".{COMMANDS[arg]}", __name__)
                return arg
            break
    load_all()
    return None


_building = threading.Lock()


def command(name: str | None) -> click.Command:
    """The click command for one run: the app with only `name` built when given (typer
    builds every registered command on each run, and this run can reach no other)."""
    from typer.main import get_command

    with _building:
        kept = root.registered_commands, root.registered_groups
        if name is not None:
            root.registered_commands = [c for c in kept[0] if _name(c) == name]
            root.registered_groups = [g for g in kept[1] if g.name == name]
        try:
            return get_command(root)
        finally:
            root.registered_commands, root.registered_groups = kept


def _name(info: Any) -> str:
    return str(info.name or info.callback.__name__.replace("_", "-"))


def load_all() -> None:
    """Register every command, in `MODULES` order whatever was loaded before."""
    import importlib

    for name in MODULES:
        importlib.import_module(f".{name}", __name__)
    rank = {f"{__name__}.{name}": i for i, name in enumerate(MODULES)}

    def module_of(callback: Any) -> int:
        return rank[getattr(callback, "__module__", "")]

    root.registered_commands.sort(key=lambda c: module_of(c.callback))
    root.registered_groups.sort(key=lambda g: module_of(
        g.typer_instance.registered_commands[0].callback if g.typer_instance else None))


def __getattr__(name: str) -> Any:
    if name == "app":  # the whole command, every command registered (tests, tools)
        load_all()
        return root
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app; every error is shown by the one mapper (loomdb.edge)."""
    args = sys.argv[1:] if argv is None else argv
    try:
        code = command(load(args))(args=args, standalone_mode=False)
    except LoomError as exc:
        _fail(exc, "--json" in args)
    except Exception as exc:  # click's own errors arrive here in non-standalone mode
        usage = _usage_error(exc)
        if usage is None:
            raise
        _fail(usage, "--json" in args)
    raise SystemExit(code if isinstance(code, int) else 0)


def _usage_error(exc: BaseException) -> LoomError | None:
    """Click's usage errors and aborts (from whichever copy of click raised them) as
    typed errors; None for anything else, which is a bug and propagates."""
    if type(exc).__name__ == "Abort":
        return UsageError("", "aborted")
    format_message = getattr(exc, "format_message", None)
    if callable(format_message) and hasattr(exc, "exit_code"):
        return UsageError("", str(format_message()))
    return None


def _fail(exc: BaseException, as_json: bool) -> None:
    from ..edge import failure

    shown = failure(exc)
    if as_json:
        typer.echo(json.dumps(shown.to_json(), ensure_ascii=False))
    typer.echo(f"loomdb: error: {shown.message}", err=True)
    raise SystemExit(shown.exit_code)
