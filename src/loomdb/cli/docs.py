"""Commands on versioned documents: doc new, commit, log, branch, checkout, merge, show,
diff, from-message, list, rm."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from ..errors import InvalidInput
from . import JSON, emit, loom
from . import root as app

doc_app = typer.Typer(help="Versioned documents: revisions over the shared content.",
                      no_args_is_help=True)
app.add_typer(doc_app, name="doc")

TEXT = typer.Option(None, "--text", help="The document's text.")
FILE = typer.Option(None, "--file", help="Read the content from a file.")


def _content(ctx: typer.Context, text: str | None, file: Path | None) -> Any:
    if (text is None) == (file is None):
        raise InvalidInput("content", "give exactly one of --text, --file")
    if text is not None:
        return text
    assert file is not None
    return loom(ctx).file_content(file)


@doc_app.command("new")
def doc_new(ctx: typer.Context, name: str = typer.Argument(...), text: str = TEXT,
            file: Path = FILE, message: str = typer.Option("", "-m", "--message"),
            as_json: bool = JSON) -> None:
    """Create a document with its first revision (branch main)."""
    from ..documents import service as D

    doc, rev = D.new(loom(ctx), name, _content(ctx, text, file), message)
    emit(as_json, {"document": doc.name, "revision": rev.id}, f"{doc.name} {rev.id}")


@doc_app.command("commit")
def doc_commit(ctx: typer.Context, name: str = typer.Argument(...), text: str = TEXT,
               file: Path = FILE, message: str = typer.Option("", "-m", "--message"),
               branch: str = typer.Option(None, "--branch", help="Default: the current branch."),
               as_json: bool = JSON) -> None:
    """A new revision after the branch head (refused when nothing changed)."""
    from ..documents import service as D

    rev = D.commit(loom(ctx), name, _content(ctx, text, file), message, branch)
    emit(as_json, {"revision": rev.id}, rev.id)


@doc_app.command("log")
def doc_log(ctx: typer.Context, name: str = typer.Argument(...),
            branch: str = typer.Option(None, "--branch"), as_json: bool = JSON) -> None:
    """Revisions reachable from a branch head, newest first."""
    from ..documents import service as D

    rows = [r.log_json() for r in D.log(loom(ctx), name, branch)]
    emit(as_json, {"revisions": rows},
         "\n".join(f"{r['id']}  {r['created_at']}  {r['message']}" for r in rows))


@doc_app.command("branch")
def doc_branch(ctx: typer.Context, name: str = typer.Argument(...),
               branch: str = typer.Argument(...),
               at: str = typer.Option(None, "--at", help="Revision or branch (default: current)."),
               as_json: bool = JSON) -> None:
    """Start a branch at a revision."""
    from ..documents import service as D

    out = D.branch(loom(ctx), name, branch, at)
    emit(as_json, out, f"{out['branch']} -> {out['revision']}")


@doc_app.command("checkout")
def doc_checkout(ctx: typer.Context, name: str = typer.Argument(...),
                 target: str = typer.Argument(..., help="A branch or a revision."),
                 as_json: bool = JSON) -> None:
    """Move the document's current pointer."""
    from ..documents import service as D

    out = D.checkout(loom(ctx), name, target)
    emit(as_json, out, f"{name} at {out['branch'] or out['revision']}")


@doc_app.command("merge")
def doc_merge(ctx: typer.Context, name: str = typer.Argument(...),
              branch: str = typer.Argument(...),
              message: str = typer.Option("", "-m", "--message"), as_json: bool = JSON) -> None:
    """Merge BRANCH into the current branch (conflicts are reported; nothing is written)."""
    from ..documents import service as D

    rev = D.merge(loom(ctx), name, branch, message)
    emit(as_json, {"revision": rev.id, "parents": list(rev.parents)}, rev.id)


@doc_app.command("show")
def doc_show(ctx: typer.Context, spec: str = typer.Argument(..., metavar="NAME[@REV|@BRANCH]"),
             as_json: bool = JSON) -> None:
    """A document's content at its current state, a revision or a branch."""
    from ..documents import service as D

    shown = D.show(loom(ctx), spec).to_json()
    emit(as_json, shown, shown.get("text"))


@doc_app.command("diff")
def doc_diff(ctx: typer.Context, name: str = typer.Argument(...),
             rev1: str = typer.Argument(...), rev2: str = typer.Argument(...),
             as_json: bool = JSON) -> None:
    """Unified diff between two revisions (or branches)."""
    from ..documents import service as D

    text = D.diff(loom(ctx), name, rev1, rev2)
    emit(as_json, {"diff": text}, text.rstrip("\n"))


@doc_app.command("from-message")
def doc_from_message(ctx: typer.Context, headish: str = typer.Argument(...),
                     name: str = typer.Argument(...),
                     message: str = typer.Option("", "-m", "--message"),
                     as_json: bool = JSON) -> None:
    """A document (or new revision) whose content IS a message's content (same id)."""
    from ..documents import service as D

    doc, rev = D.from_message(loom(ctx), headish, name, message)
    emit(as_json, {"document": doc.name, "revision": rev.id, "content_id": rev.content_id},
         f"{doc.name} {rev.id}")


@doc_app.command("list")
def doc_list(ctx: typer.Context, as_json: bool = JSON) -> None:
    """Every document with its current branch and revision."""
    from ..documents import service as D

    rows = D.documents(loom(ctx))
    emit(as_json, {"documents": rows},
         "\n".join(f"{r['document']}\t{r['branch'] or '-'}\t{r['revision']}" for r in rows))


@doc_app.command("rm")
def doc_rm(ctx: typer.Context, name: str = typer.Argument(...), as_json: bool = JSON) -> None:
    """Delete a document (references to it then read as dangling)."""
    from ..documents import service as D

    D.delete(loom(ctx), name)
    emit(as_json, {"deleted": name}, f"deleted {name}")
