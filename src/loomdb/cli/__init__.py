"""The `loomdb` command: a thin layer over the library, one command -> one call.

    loomdb [--db PATH|URL] COMMAND ARGS... [--json]

This package is the only place (with `loomdb.open`, the library's entry point) that
reads the environment, once, into one `loomdb.settings.Settings` every command shares;
with the server it is the only place that prints or exits. Library errors become exit code 2 with a one-line message on
stderr, or `{"error": ...}` on stdout when `--json` was given; nothing is written.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ..errors import InvalidInput, LoomError, UsageError

if TYPE_CHECKING:
    from ..api import Loom
    from ..settings import Settings

F = TypeVar("F", bound=Callable[..., Any])

#: which module defines each command and command group, in the order `--help` lists
#: them (tests/test_cli.py holds this to the modules): a call imports its command's
#: module only, since importing them all costs a sixth of a short command's run
COMMANDS = {
    **dict.fromkeys(("new", "add", "edit", "select", "link", "bookmark", "tag", "exclude",
                     "prune", "rename"), "write"),
    "fork": "refs", **dict.fromkeys(("diff", "merge", "replay"), "branches"),
    **dict.fromkeys(("path", "children", "siblings", "versions", "leaves", "branch-points",
                     "edges", "show", "log", "tree", "trees", "archive", "verify"), "read"),
    **dict.fromkeys(("context", "generate", "compact", "chat"), "models"),
    "buffer": "buffer", "import": "interop", "export": "interop", "watch": "interop",
    "migrate": "admin",
    "backup": "admin", "backlinks": "references", "search": "search", "gc": "gc",
    **dict.fromkeys(("delete", "redact", "forgotten", "secrets", "trash", "restore", "hold"),
                    "forget"),
    **dict.fromkeys(("pending", "approve", "deny", "route", "spawn", "propose", "inbox",
                     "reject", "amend"), "agents"),
    "serve": "serve", "gateway": "gateway", "mcp": "mcp", "share": "shares", "trust": "trust",
    # the groups, after every plain command
    "session": "refs", "view": "refs", "doc": "docs", "coll": "colls", "agent": "agents",
    "persona": "agents", "user": "serve", "piece": "pieces",
}


class State:
    """What every command shares: where the store is, opened on first use, and the
    settings read from the environment."""

    def __init__(self, db: str | None, settings: Settings, *, named: bool = True) -> None:
        self.db = db
        self.settings = settings
        #: whether the store was named (--db, $LOOMDB_URL, $LOOMDB_HOME), not ./.loomdb
        self.named = named
        self._loom: Loom | None = None

    @property
    def loom(self) -> Loom:
        """The store, opened (and migrated) on first use: `--help` never opens it."""
        if self._loom is None:
            from ..api import open as open_store

            # with the limits an operator set (LOOMDB_LIMIT_<NAME>)
            self._loom = open_store(self.db, settings=self.settings,
                                    limits=self.settings.limits())
        return self._loom

    def close(self) -> None:
        """Close the store if a command opened it (its connections and pools with it,
        rather than whenever the garbage collector gets to them)."""
        if self._loom is not None:
            self._loom.close()
            self._loom = None


class Argument(click.Argument):
    """A positional argument with a help text, which `--help` lists under Arguments
    (click takes one from 8.5 only, and then prints it in a section of its own)."""

    def __init__(self, param_decls: Sequence[str], help: str | None = None,
                 **attrs: Any) -> None:
        super().__init__(param_decls, **attrs)
        self.help = help

    def get_help_record(self, ctx: click.Context) -> tuple[str, str]:
        """`NAME  help  [required]`, as an option's line reads."""
        return self.make_metavar(ctx), "  ".join(
            part for part in (self.help, "[required]" if self.required else "") if part)


class Command(click.Command):
    """A command whose `--help` lists its arguments, then its options, with any click
    from 8.2 (8.5 added a section of its own for arguments; earlier ones have none)."""

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Usage, description, arguments and options, epilog."""
        self.format_usage(ctx, formatter)
        self.format_help_text(ctx, formatter)
        self.format_options(ctx, formatter)
        self.format_epilog(ctx, formatter)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """An Arguments section before the Options one (click lists only options)."""
        for title, kind in (("Arguments", click.Argument), ("Options", click.Option)):
            rows = [row for param in self.get_params(ctx) if isinstance(param, kind)
                    if (row := param.get_help_record(ctx)) is not None]
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


class Group(click.Group):
    """A command group listing its commands in the order they are defined (click sorts
    them by name), and naming the nearest command when one is mistyped."""

    command_class = Command

    def list_commands(self, ctx: click.Context) -> list[str]:
        """The commands as defined: related ones stay together in `--help`."""
        return list(self.commands)

    def resolve_command(self, ctx: click.Context, args: list[str],
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        """Click's lookup; an unknown name's error suggests the close ones."""
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:
            hint = _nearest(args[0], self.list_commands(ctx)) if args else ""
            if not hint:
                raise
            raise click.UsageError(f"{exc.message.rstrip('.')}. {hint}", ctx) from None


def _nearest(typo: str, names: list[str]) -> str:
    """`Did you mean 'session'?` for `sesion`; empty when nothing is close."""
    from difflib import get_close_matches  # a mistake's path only

    matches = get_close_matches(typo, names)
    return f"Did you mean {', '.join(repr(m) for m in matches)}?" if matches else ""


class Commands(Group):
    """The root group: a command's module is imported when the command is looked up
    (`COMMANDS`), so a run loads the one command it names; `--help` loads them all."""

    group_class = Group  # its subgroups are plain Groups

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command, in `COMMANDS` order, without importing any."""
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command, its module imported first when it is not yet."""
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            import importlib

            importlib.import_module(f"{__name__}.{COMMANDS[cmd_name]}")
        return self.commands.get(cmd_name)


@click.group(cls=Commands, context_settings={"show_default": True})
@click.option("--db", envvar="LOOMDB_URL", show_envvar=True,
              help="Store folder, sqlite:///file or postgresql:// URL "
              "(default: $LOOMDB_HOME, else ./.loomdb/).")
@click.option("--providers", type=click.Path(dir_okay=False), metavar="FILE",
              help="providers.toml to use (default: $LOOMDB_PROVIDERS, a trusted store "
              "folder's, else ~/.config/loomdb/providers.toml).")
@click.option("--tools", type=click.Path(dir_okay=False), metavar="FILE",
              help="tools.toml to use (default: $LOOMDB_TOOLS, a trusted store "
              "folder's, else ~/.config/loomdb/tools.toml).")
@click.pass_context
def root(ctx: click.Context, db: str | None, providers: str | None,
         tools: str | None) -> None:
    """Git for LLM conversations: branch, fork, edit, and assemble context."""
    from dataclasses import replace

    from ..settings import DEFAULT_HOME, Settings

    # the one read of the environment: every command gets its settings from here
    given = Settings.from_environ(os.environ)
    # a file named on the command line wins over the environment's
    given = replace(given, providers=providers or given.providers,
                    tools=tools or given.tools)
    state = State(db or given.home or DEFAULT_HOME, given,
                  named=bool(db or given.home))
    ctx.obj = state
    ctx.call_on_close(state.close)


def loom(ctx: click.Context) -> Loom:
    """The store every command works on (see State)."""
    state = ctx.find_object(State)
    assert state is not None
    return state.loom


def settings_of(ctx: click.Context) -> Settings:
    """What the command read from its environment (see State)."""
    state = ctx.find_object(State)
    assert state is not None
    return state.settings


def emit(as_json: bool, value: Any, text: str | None = None) -> None:
    """Print a result: JSON when asked, else the readable text (or JSON as a fallback)."""
    if as_json or text is None:
        click.echo(json.dumps(value, ensure_ascii=False, indent=None if as_json else 2))
    else:
        click.echo(text)


def argument(name: str, *, help: str | None = None, **attrs: Any) -> Callable[[F], F]:
    """A positional argument that `--help` documents (see Argument)."""
    return click.argument(name, cls=Argument, help=help, **attrs)


def _listed(ctx: click.Context, param: click.Parameter, value: Sequence[str]) -> list[str]:
    return list(value)


def repeatable(*decls: str, help: str | None = None) -> Callable[[F], F]:
    """An option given any number of times; its values a list, as the library takes
    them (click gives a tuple)."""
    return click.option(*decls, multiple=True, callback=_listed, help=help)


def arguments(name: str, *, metavar: str | None = None) -> Callable[[F], F]:
    """One or more positional values, as a list (see `repeatable`)."""
    return argument(name, nargs=-1, required=True, callback=_listed, metavar=metavar)


#: `--json`, which every command takes
JSON = click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
#: a file or folder name, given to the command as a Path
PATH = click.Path(path_type=Path)


def load_all() -> None:
    """Import every command's module (tests and tools walk the whole command)."""
    import importlib

    for module in dict.fromkeys(COMMANDS.values()):
        importlib.import_module(f".{module}", __name__)


def __getattr__(name: str) -> Any:
    if name == "app":  # the whole command, every command loaded (tests, tools)
        load_all()
        return root
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the command; every error is shown by the one mapper (loomdb.edge)."""
    args = sys.argv[1:] if argv is None else argv
    try:
        _check_utf8(args)
        code = root.main(args=args, standalone_mode=False)
    except LoomError as exc:
        _fail(exc, "--json" in args)
    except Exception as exc:  # click's own errors arrive here in non-standalone mode
        if _interrupted(exc):
            raise SystemExit(130) from None
        usage = _usage_error(exc)
        if usage is None:
            raise
        _fail(usage, "--json" in args)
    raise SystemExit(code if isinstance(code, int) else 0)


def _check_utf8(args: Sequence[str]) -> None:
    """Refuse an argument that is not valid UTF-8 (Python hands its bytes over as lone
    surrogates): nothing could store, print or compare it faithfully."""
    for number, arg in enumerate(args, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            shown = arg.encode("utf-8", "backslashreplace").decode("utf-8")
            raise UsageError(f"argument {number}", f"{shown!r} is not valid UTF-8") from None


def _interrupted(exc: BaseException) -> bool:
    """Ctrl-C, which click turns into an abort: the shell's exit 130, no message."""
    return type(exc).__name__ == "Abort" and isinstance(exc.__cause__, KeyboardInterrupt)


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
        click.echo(json.dumps(shown.to_json(), ensure_ascii=False))
    click.echo(f"loomdb: error: {shown.message}", err=True)
    raise SystemExit(shown.exit_code)


def json_arg(name: str, value: str | None) -> Any:
    """A JSON option's value, parsed; an error names the option and the place."""
    if value is None:
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise InvalidInput(name, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
