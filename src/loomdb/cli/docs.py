"""Commands on versioned documents: doc new, commit, log, branch, checkout, merge, show,
diff, from-message, list, rm."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..errors import InvalidInput
from . import JSON, PATH, argument, emit, loom
from . import root as app

#: the content of a revision: one of these two
TEXT = click.option("--text", help="The document's text.")
FILE = click.option("--file", type=PATH, help="Read the content from a file.")
MESSAGE = click.option("-m", "--message", default="", show_default=False)  # none: no "" shown


@app.group("doc")
def doc_app() -> None:
    """Versioned documents: revisions over the shared content."""


def _content(ctx: click.Context, text: str | None, file: Path | None) -> Any:
    if (text is None) == (file is None):
        raise InvalidInput("content", "give exactly one of --text, --file")
    if text is not None:
        return text
    assert file is not None
    return loom(ctx).file_content(file)


@doc_app.command("new")
@argument("name")
@TEXT
@FILE
@MESSAGE
@JSON
@click.pass_context
def doc_new(ctx: click.Context, name: str, text: str | None, file: Path | None, message: str,
            as_json: bool) -> None:
    """Create a document with its first revision (branch main)."""
    doc, rev = loom(ctx).documents.new(name, _content(ctx, text, file), message)
    emit(as_json, {"document": doc.name, "revision": rev.id}, f"{doc.name} {rev.id}")


@doc_app.command("commit")
@argument("name")
@TEXT
@FILE
@MESSAGE
@click.option("--branch", help="Default: the current branch.")
@JSON
@click.pass_context
def doc_commit(ctx: click.Context, name: str, text: str | None, file: Path | None, message: str,
               branch: str | None, as_json: bool) -> None:
    """A new revision after the branch head (refused when nothing changed)."""
    rev = loom(ctx).documents.commit(name, _content(ctx, text, file), message, branch)
    emit(as_json, {"revision": rev.id}, rev.id)


@doc_app.command("log")
@argument("name")
@click.option("--branch")
@JSON
@click.pass_context
def doc_log(ctx: click.Context, name: str, branch: str | None, as_json: bool) -> None:
    """Revisions reachable from a branch head, newest first."""
    rows = [r.log_json() for r in loom(ctx).documents.log(name, branch)]
    emit(as_json, {"revisions": rows},
         "\n".join(f"{r['id']}  {r['created_at']}  {r['message']}" for r in rows))


@doc_app.command("branch")
@argument("name")
@argument("branch")
@click.option("--at", help="Revision or branch (default: current).")
@JSON
@click.pass_context
def doc_branch(ctx: click.Context, name: str, branch: str, at: str | None,
               as_json: bool) -> None:
    """Start a branch at a revision."""
    out = loom(ctx).documents.branch(name, branch, at)
    emit(as_json, out, f"{out['branch']} -> {out['revision']}")


@doc_app.command("checkout")
@argument("name")
@argument("target", help="A branch or a revision.")
@JSON
@click.pass_context
def doc_checkout(ctx: click.Context, name: str, target: str, as_json: bool) -> None:
    """Move the document's current pointer."""
    out = loom(ctx).documents.checkout(name, target)
    emit(as_json, out, f"{name} at {out['branch'] or out['revision']}")


@doc_app.command("merge")
@argument("name")
@argument("branch")
@MESSAGE
@JSON
@click.pass_context
def doc_merge(ctx: click.Context, name: str, branch: str, message: str, as_json: bool) -> None:
    """Merge BRANCH into the current branch (conflicts are reported; nothing is written)."""
    rev = loom(ctx).documents.merge(name, branch, message)
    emit(as_json, {"revision": rev.id, "parents": list(rev.parents)}, rev.id)


@doc_app.command("show")
@argument("spec", metavar="NAME[@REV|@BRANCH]")
@JSON
@click.pass_context
def doc_show(ctx: click.Context, spec: str, as_json: bool) -> None:
    """A document's content at its current state, a revision or a branch."""
    shown = loom(ctx).documents.show(spec).to_json()
    emit(as_json, shown, shown.get("text"))


@doc_app.command("diff")
@argument("name")
@argument("rev1")
@argument("rev2")
@JSON
@click.pass_context
def doc_diff(ctx: click.Context, name: str, rev1: str, rev2: str, as_json: bool) -> None:
    """Unified diff between two revisions (or branches)."""
    text = loom(ctx).documents.diff(name, rev1, rev2)
    emit(as_json, {"diff": text}, text.rstrip("\n"))


@doc_app.command("from-message")
@argument("headish")
@argument("name")
@MESSAGE
@JSON
@click.pass_context
def doc_from_message(ctx: click.Context, headish: str, name: str, message: str,
                     as_json: bool) -> None:
    """A document (or new revision) whose content IS a message's content (same id)."""
    doc, rev = loom(ctx).documents.from_message(headish, name, message)
    emit(as_json, {"document": doc.name, "revision": rev.id, "content_id": rev.content_id},
         f"{doc.name} {rev.id}")


@doc_app.command("list")
@JSON
@click.pass_context
def doc_list(ctx: click.Context, as_json: bool) -> None:
    """Every document with its current branch and revision."""
    rows = loom(ctx).documents.list()
    emit(as_json, {"documents": rows},
         "\n".join(f"{r['document']}\t{r['branch'] or '-'}\t{r['revision']}" for r in rows))


@doc_app.command("rm")
@argument("name")
@JSON
@click.pass_context
def doc_rm(ctx: click.Context, name: str, as_json: bool) -> None:
    """Delete a document (references to it then read as dangling)."""
    loom(ctx).documents.delete(name)
    emit(as_json, {"deleted": name}, f"deleted {name}")
