"""The `loomdb` command: a thin layer over the library, one command -> one call.

    loomdb [--db PATH|URL] COMMAND ARGS... [--json]

This package is the only place (with the HTTP server) that reads the environment,
prints, or exits. Library errors become exit code 2 with a one-line message on
stderr, or `{"error": ...}` on stdout when `--json` was given; nothing is written.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import typer

from ..errors import LoomError

app = typer.Typer(
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
        self._loom: Any = None

    @property
    def loom(self) -> Any:
        if self._loom is None:
            from ..loom import Loom

            self._loom = Loom.open(self.db)
        return self._loom


@app.callback()
def _root(
    ctx: typer.Context,
    db: str = typer.Option(
        None, "--db", envvar="LOOMDB_URL",
        help="Store folder, sqlite:///file or postgresql:// URL "
        "(default: $LOOMDB_HOME, else ./.loomdb/).",
    ),
) -> None:
    import os

    ctx.obj = State(db or os.environ.get("LOOMDB_HOME") or ".loomdb")


def loom(ctx: typer.Context) -> Any:
    return ctx.find_object(State).loom  # type: ignore[union-attr]


def emit(as_json: bool, value: Any, text: str | None = None) -> None:
    """Print a result: JSON when asked, else the readable text (or JSON as a fallback)."""
    if as_json or text is None:
        typer.echo(json.dumps(value, ensure_ascii=False, indent=None if as_json else 2))
    else:
        typer.echo(text)


JSON = typer.Option(False, "--json", help="Print machine-readable JSON.")

from . import write, refs, read, models, buffer, interop, admin, agents, mcp  # noqa: E402,F401,I001  # isort: skip  (command order in --help)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app and translate library errors at the edge."""
    args = sys.argv[1:] if argv is None else argv
    try:
        code = app(args=args, standalone_mode=False)
    except LoomError as exc:
        _fail(str(exc), "--json" in args)
    except typer.Abort:
        _fail("aborted", "--json" in args)
    except Exception as exc:  # click usage errors arrive here in non-standalone mode
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            raise SystemExit(2) from None
        raise
    raise SystemExit(code if isinstance(code, int) else 0)


def _fail(message: str, as_json: bool) -> None:
    one_line = " ".join(message.split())
    if as_json:
        typer.echo(json.dumps({"error": one_line}, ensure_ascii=False))
    typer.echo(f"loomdb: error: {one_line}", err=True)
    raise SystemExit(2)
