"""Commands on prompt pieces: piece add, log, show, list, used-by, import-llm
(`loomdb.front.pieces`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..errors import InvalidInput
from . import JSON, PATH, argument, emit, loom
from . import root as app

if TYPE_CHECKING:
    from ..front.pieces import Pieces


def pieces(ctx: click.Context) -> Pieces:
    lm = loom(ctx)
    return lm.as_(lm.operator).pieces


@app.group("piece")
def piece_app() -> None:
    """Prompt pieces: named, versioned texts (and templates) threads name, stored once."""


@piece_app.command("add")
@argument("name")
@argument("file", required=False, type=PATH, help="Read the text from this file.")
@click.option("--text", help="The text itself.")
@click.option("--template", "is_template", is_flag=True,
              help="A template: a JSON object of system, system_piece, pieces, options, "
                   "model and prompt.")
@JSON
@click.pass_context
def piece_add(ctx: click.Context, name: str, file: Path | None, text: str | None,
              is_template: bool, as_json: bool) -> None:
    """Add a version of piece NAME (made when new); the same text again adds nothing."""
    if (file is None) == (text is None):
        raise InvalidInput("piece", "give exactly one of FILE or --text")
    if file is not None:
        limit = loom(ctx).limits.piece
        if not file.is_file() or file.stat().st_size > limit:
            raise InvalidInput(f"piece {name}", f"FILE is not a regular file of at most "
                               f"{limit} bytes")
        try:
            text = file.read_text("utf-8")
        except UnicodeDecodeError:
            raise InvalidInput(f"piece {name}", "FILE is not UTF-8 text") from None
    assert text is not None
    out = pieces(ctx).add(name, text, kind="template" if is_template else "piece")
    what = "added" if out["added"] else "unchanged"
    emit(as_json, out, f"{out['name']}@{out['version']} {out['hash']} ({what})")


@piece_app.command("log")
@argument("name")
@JSON
@click.pass_context
def piece_log(ctx: click.Context, name: str, as_json: bool) -> None:
    """The versions of piece NAME, oldest first."""
    found = pieces(ctx).log(name)
    emit(as_json, {"name": name, "versions": found},
         "\n".join(f"{v['version']}\t{v['hash']}\t{v['created_at']}" for v in found))


@piece_app.command("show")
@argument("spec", help="NAME (the newest version), NAME@N or NAME@HASH-PREFIX.")
@JSON
@click.pass_context
def piece_show(ctx: click.Context, spec: str, as_json: bool) -> None:
    """A version of a piece and its text."""
    found = pieces(ctx).show(spec)
    emit(as_json, found, found["text"])


@piece_app.command("list")
@JSON
@click.pass_context
def piece_list(ctx: click.Context, as_json: bool) -> None:
    """Every piece and template, with its newest version."""
    found = pieces(ctx).list()
    emit(as_json, {"pieces": found}, "\n".join(
        f"{p['name']}\t{p['kind']}\t{p['versions']}\t{p['hash']}" for p in found))


@piece_app.command("used-by")
@argument("name")
@JSON
@click.pass_context
def piece_used_by(ctx: click.Context, name: str, as_json: bool) -> None:
    """The messages naming piece NAME (a block, or the system piece of their thread)."""
    found = pieces(ctx).used_by(name)
    emit(as_json, {"name": name, "used_by": found},
         "\n".join(f"{u['tree']}\t{u['node']}" for u in found))


@piece_app.command("import-llm")
@click.option("--logs", type=PATH, help="simonw/llm's logs.db: its fragments become pieces.")
@click.option("--templates", type=PATH, help="llm's templates folder: its YAML templates "
              "become templates.")
@JSON
@click.pass_context
def piece_import_llm(ctx: click.Context, logs: Path | None, templates: Path | None,
                     as_json: bool) -> None:
    """Import simonw/llm's fragments and templates (fragments first: a template may
    name them). Only the paths given are read."""
    if logs is None and templates is None:
        raise InvalidInput("import-llm", "give --logs, --templates or both")
    out = pieces(ctx).import_llm(logs, templates)
    lines = [f"{what}: {r['added']} added, {r['unchanged']} unchanged, "
             f"{len(r['skipped'])} skipped" for what, r in out.items()]
    lines += [f"  skipped: {s}" for r in out.values() for s in r["skipped"]]
    emit(as_json, out, "\n".join(lines))
