"""`loomdb buffer`: a buffer tree as one document, its draft, edits and branches.

    loomdb buffer HEADISH                                the document (path text + draft)
    loomdb buffer HEADISH --authorship                   model text coloured
    loomdb buffer HEADISH --append T | --set T | --file F    edit the draft
    loomdb buffer HEADISH --commit                       the draft as a node
    loomdb buffer HEADISH --edit START:END (--text T | --file F)   edit committed text
    loomdb buffer HEADISH --alternatives N               branches and versions at path index N
    loomdb buffer HEADISH --switch NODE                  show another branch or version
    loomdb buffer HEADISH --diverge OTHER                where two paths part

At most one action per call. Generating is the `generate` verb, which commits the
draft first on a buffer tree. See docs/buffer.md.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import typer

from ..errors import InvalidInput
from . import JSON, emit, loom
from . import root as app

MODEL_COLOUR = "blue"


def _read(file: Path) -> str:
    try:
        return file.read_text("utf-8")
    except OSError as exc:
        raise InvalidInput(str(file), f"cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise InvalidInput(str(file), f"not valid UTF-8 at byte {exc.start}") from None


def _range(value: str) -> tuple[int, int]:
    start, sep, end = value.partition(":")
    try:
        if not sep:
            raise ValueError
        return int(start), int(end)
    except ValueError:
        raise InvalidInput("--edit", f"{value!r} is not START:END (two character offsets)") from None


def _coloured(doc: Any) -> str:
    return "".join(typer.style(s.text, fg=MODEL_COLOUR) if s.model else s.text for s in doc.spans)


def _preview(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _show(lm: Any, headish: str, authorship: bool, as_json: bool) -> None:
    if authorship:
        doc = lm.buffer.document(headish)
        if as_json:
            emit(True, {"text": doc.text, "spans": [s.to_json() for s in doc.spans]})
        else:  # coloured even through a pipe (`less -R`); NO_COLOR turns it off
            typer.echo(_coloured(doc), color=not os.environ.get("NO_COLOR"))
        return
    pos = lm.resolve(headish)
    draft = lm.buffer.draft(pos, strict=False)
    body = lm.buffer.text(pos)
    emit(as_json, {"text": body, "draft": draft}, body)


@app.command()
def buffer(
    ctx: typer.Context,
    headish: str = typer.Argument(..., help="A session or view (drafts live there), or any point."),
    append: str = typer.Option(None, "--append", help="Add text at the end of the draft."),
    set_: str = typer.Option(None, "--set", help="Replace the draft."),
    file: Path = typer.Option(None, "--file", help="Replace the draft (or, with --edit, the range) with a file's text."),
    commit: bool = typer.Option(False, "--commit", help="Write the draft as a node; the ref moves to it."),
    edit: str = typer.Option(None, "--edit", help="START:END character range of the document to replace."),
    text: str = typer.Option(None, "--text", help="The replacement text for --edit."),
    alternatives: str = typer.Option(None, "--alternatives", help="Path index (0 = root, -1 = head) or node: list what could fill it."),
    switch: str = typer.Option(None, "--switch", help="Show this branch or version (moves or selects in the ref)."),
    diverge: str = typer.Option(None, "--diverge", help="Another headish: where the two paths part."),
    authorship: bool = typer.Option(False, "--authorship", help="Colour model text; with --json, the authorship spans."),
    as_json: bool = JSON,
) -> None:
    """A buffer tree as one document: show it, edit its draft or its text, navigate branches."""
    actions = {
        "--append": append is not None, "--set": set_ is not None,
        "--file": file is not None and edit is None, "--commit": commit,
        "--edit": edit is not None, "--alternatives": alternatives is not None,
        "--switch": switch is not None, "--diverge": diverge is not None,
    }
    chosen = [name for name, on in actions.items() if on]
    if len(chosen) > 1:
        raise InvalidInput("options", f"give one action at a time, not {' and '.join(chosen)}")
    if text is not None and edit is None:
        raise InvalidInput("--text", "goes with --edit START:END (the draft takes --set or --append)")
    if authorship and chosen and chosen[0] not in ("--append", "--set", "--file"):
        raise InvalidInput("--authorship", f"shows the document; it does not go with {chosen[0]}")
    lm = loom(ctx)
    action = chosen[0] if chosen else None
    if action in ("--append", "--set", "--file"):
        if action == "--append":
            lm.buffer.append_draft(headish, append)
        else:
            lm.buffer.set_draft(headish, set_ if action == "--set" else _read(file))
        _show(lm, headish, authorship, as_json)
    elif action == "--commit":
        node = lm.buffer.commit(headish)
        emit(as_json, {"node": node.id if node else None}, node.id if node else "(empty draft)")
    elif action == "--edit":
        if (text is None) == (file is None):
            raise InvalidInput("--edit", "give the replacement with exactly one of --text, --file")
        start, end = _range(edit)
        nodes = lm.buffer.edit(headish, start, end, text if text is not None else _read(file))
        ids = [n.id for n in nodes]
        emit(as_json, {"nodes": ids}, "\n".join(ids) or "(draft edited)")
    elif action == "--alternatives":
        alts = lm.buffer.alternatives(headish, alternatives)
        lines = [f"position {alts.index}: {alts.node}", "branches:"]
        lines += [f"{'*' if a.current else ' '} {a.node}  {a.author:<12} {_preview(a.text)}"
                  for a in alts.branches]
        if len(alts.versions) > 1:
            lines.append("versions:")
            lines += [f"{'*' if a.current else ' '} {a.node}  {a.author:<12} {_preview(a.text)}"
                      for a in alts.versions]
        emit(as_json, alts.to_json(), "\n".join(lines))
    elif action == "--switch":
        done = lm.buffer.switch(headish, switch)
        what = "moved to" if done.moved else "stays at"
        sel = f" (selected {', '.join(done.selected)})" if done.selected else ""
        emit(as_json, done.to_json(), f"{done.ref} {what} {done.head}{sel}")
    elif action == "--diverge":
        div = lm.buffer.diverge(headish, diverge)
        where = f"after {div.base}" if div.base else "at the root"
        text_out = (f"{div.kind} at position {div.index} ({where}, character {div.offset})\n"
                    f"only in {headish}: {' '.join(div.a) or '-'}\n"
                    f"only in {diverge}: {' '.join(div.b) or '-'}")
        emit(as_json, div.to_json(), text_out)
    else:
        _show(lm, headish, authorship, as_json)
