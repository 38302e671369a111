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

from pathlib import Path
from typing import Any

import click

from ..errors import InvalidInput
from . import JSON, PATH, argument, emit, loom, settings_of
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
    return "".join(click.style(s.text, fg=MODEL_COLOUR) if s.model else s.text for s in doc.spans)


def _preview(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _show(lm: Any, headish: str, authorship: bool, as_json: bool) -> None:
    if authorship:
        doc = lm.buffer.document(headish)
        if as_json:
            emit(True, {"text": doc.text, "spans": [s.to_json() for s in doc.spans]})
        else:  # coloured even through a pipe (`less -R`); NO_COLOR turns it off
            plain = settings_of(click.get_current_context()).no_color
            click.echo(_coloured(doc), color=not plain)
        return
    pos = lm.resolve(headish)
    draft = lm.buffer.draft(pos, strict=False)
    body = lm.buffer.text(pos)
    emit(as_json, {"text": body, "draft": draft}, body)


@app.command()
@argument("headish", help="A session or view (drafts live there), or any point.")
@click.option("--append", help="Add text at the end of the draft.")
@click.option("--set", "set_", help="Replace the draft.")
@click.option("--file", type=PATH,
              help="Replace the draft (or, with --edit, the range) with a file's text.")
@click.option("--commit", is_flag=True, help="Write the draft as a node; the ref moves to it.")
@click.option("--edit", help="START:END character range of the document to replace.")
@click.option("--text", help="The replacement text for --edit.")
@click.option("--alternatives",
              help="Path index (0 = root, -1 = head) or node: list what could fill it.")
@click.option("--switch", help="Show this branch or version (moves or selects in the ref).")
@click.option("--diverge", help="Another headish: where the two paths part.")
@click.option("--authorship", is_flag=True,
              help="Colour model text; with --json, the authorship spans.")
@JSON
@click.pass_context
def buffer(ctx: click.Context, headish: str, append: str | None, set_: str | None,
           file: Path | None, commit: bool, edit: str | None, text: str | None,
           alternatives: str | None, switch: str | None, diverge: str | None,
           authorship: bool, as_json: bool) -> None:
    """A buffer tree as one document: show it, edit its draft or its text, navigate branches."""
    _one_action(append, set_, file, commit, edit, text, alternatives, switch, diverge, authorship)
    lm = loom(ctx)
    if append is not None:
        lm.buffer.append_draft(headish, append)
        _show(lm, headish, authorship, as_json)
    elif set_ is not None:
        lm.buffer.set_draft(headish, set_)
        _show(lm, headish, authorship, as_json)
    elif edit is not None:  # before --file, which then holds the replacement
        _edit(lm, headish, edit, text, file, as_json)
    elif file is not None:
        lm.buffer.set_draft(headish, _read(file))
        _show(lm, headish, authorship, as_json)
    elif commit:
        node = lm.buffer.commit(headish)
        emit(as_json, {"node": node.id if node else None}, node.id if node else "(empty draft)")
    elif alternatives is not None:
        _alternatives(lm, headish, alternatives, as_json)
    elif switch is not None:
        _switch(lm, headish, switch, as_json)
    elif diverge is not None:
        _diverge(lm, headish, diverge, as_json)
    else:
        _show(lm, headish, authorship, as_json)


def _one_action(append: str | None, set_: str | None, file: Path | None, commit: bool,
                edit: str | None, text: str | None, alternatives: str | None,
                switch: str | None, diverge: str | None, authorship: bool) -> None:
    """Refuse two actions at once, --text without --edit, and --authorship beside an
    action that shows no document: each is a mistake, not a sequence of steps."""
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


def _edit(lm: Any, headish: str, edit: str, text: str | None, file: Path | None,
          as_json: bool) -> None:
    if (text is None) == (file is None):
        raise InvalidInput("--edit", "give the replacement with exactly one of --text, --file")
    start, end = _range(edit)
    nodes = lm.buffer.edit(headish, start, end, _read(file) if file is not None else text)
    ids = [n.id for n in nodes]
    emit(as_json, {"nodes": ids}, "\n".join(ids) or "(draft edited)")


def _alternatives(lm: Any, headish: str, at: str, as_json: bool) -> None:
    alts = lm.buffer.alternatives(headish, at)
    lines = [f"position {alts.index}: {alts.node}", "branches:"]
    lines += [f"{'*' if a.current else ' '} {a.node}  {a.author:<12} {_preview(a.text)}"
              for a in alts.branches]
    if len(alts.versions) > 1:
        lines.append("versions:")
        lines += [f"{'*' if a.current else ' '} {a.node}  {a.author:<12} {_preview(a.text)}"
                  for a in alts.versions]
    emit(as_json, alts.to_json(), "\n".join(lines))


def _switch(lm: Any, headish: str, to: str, as_json: bool) -> None:
    done = lm.buffer.switch(headish, to)
    what = "moved to" if done.moved else "stays at"
    sel = f" (selected {', '.join(done.selected)})" if done.selected else ""
    emit(as_json, done.to_json(), f"{done.ref} {what} {done.head}{sel}")


def _diverge(lm: Any, headish: str, other: str, as_json: bool) -> None:
    div = lm.buffer.diverge(headish, other)
    where = f"after {div.base}" if div.base else "at the root"
    text_out = (f"{div.kind} at position {div.index} ({where}, character {div.offset})\n"
                f"only in {headish}: {' '.join(div.a) or '-'}\n"
                f"only in {other}: {' '.join(div.b) or '-'}")
    emit(as_json, div.to_json(), text_out)
