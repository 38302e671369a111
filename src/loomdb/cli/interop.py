"""`loomdb import`, `loomdb export` and `loomdb watch`: other tools' exports and agent
sessions in, trees out.

    loomdb import FILE|FOLDER [--format auto|FORMAT|loomdb] [--stop-on-error] [--quiet] [--json]
    loomdb export TREE|--all [--format json|jsonl|markdown|openai-jsonl|chatgpt|claude-code|
                  codex|pi] [--paths leaves|sessions] [--cwd DIR] [-o FILE] [--json]
    loomdb watch DIR [--format auto|claude-code|codex|pi] [--interval S] [--json]

The format names (and what each reads) come from `loomdb.interop.formats.REGISTRY` (through `loomdb.front.formats`).

`import` prints a summary (`--json`: exactly `{"trees", "nodes", "blobs", "skipped",
"errors", "warnings"}`) and exits 0 when every conversation landed or was skipped (an
empty one, an exact copy: `warnings` says why), 1 when some were reported in
`errors` (the others landed), 2 when the file could not be read at all (nothing
written). A progress bar (bytes read and their rate, messages written and theirs) runs
on stderr when it is a terminal, unless --quiet or --json; stdout stays clean. The
summary ends with what was read: bytes, seconds, messages per second.
`export` streams to stdout, or to FILE (written beside it, then renamed into place);
with `--json` it prints one object `{"format", "trees", "output", "bytes"}`, plus
`"text"`, the export itself, when there is no FILE.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import click

from ..errors import InvalidInput
from ..front.formats import import_usage, watch_usage
from . import JSON, PATH, argument, embed_behind, emit, loom
from . import root as app

_IMPORT_FORMATS = import_usage(("loomdb (loomdb's own json/jsonl export)",))
_WATCH_FORMATS = watch_usage() + " (default: each file's lines say)"


@app.command("import")
@argument("file", type=PATH, help="An export: .json, .jsonl or an export .zip; a Claude "
          "Code session file or project folder; a Codex or pi session file or folder; an "
          "llm logs.db.")
@click.option("--format", default="auto", help=_IMPORT_FORMATS)
@click.option("--stop-on-error", is_flag=True,
              help="Stop at the first bad conversation (earlier ones stay).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar on a terminal.")
@JSON
@click.pass_context
def import_(ctx: click.Context, file: Path, format: str, stop_on_error: bool, quiet: bool,
            as_json: bool) -> None:
    """Import every conversation of an export file: one tree each, the active branch a
    session; importing the same file again adds nothing."""
    lm = loom(ctx)
    with _progress(str(file), shown=not (quiet or as_json)) as progress:
        report = lm.import_file(file, format, stop_on_error=stop_on_error, progress=progress)
    emit(as_json, report.to_json(), report.text())
    if report.errors:
        ctx.exit(1)


class _Bar:
    """A Rich progress bar over the bytes the parser has read, with the messages written
    and their rate (stderr, terminals only; off with --quiet or --json)."""

    def __init__(self, name: str, shown: bool) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TransferSpeedColumn,
        )

        console = Console(stderr=True)
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), DownloadColumn(),
            TransferSpeedColumn(),
            TextColumn("{task.fields[done]} conversations, {task.fields[nodes]} messages "
                       "({task.fields[rate]} messages/s)"),
            TimeElapsedColumn(), console=console, transient=True,
            disable=not (shown and console.is_terminal),
        )
        self.task = self.progress.add_task(f"importing {Path(name).name}", total=None,
                                           done=0, nodes=0, rate=0)

    def __enter__(self) -> Any:
        self.progress.start()
        return self.update

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def update(self, report: Any, read: int, total: int) -> None:
        rate = report.nodes / report.seconds if report.seconds > 0 else 0
        self.progress.update(self.task, completed=read, total=total or None,
                             done=report.conversations, nodes=report.nodes, rate=f"{rate:,.0f}")


def _progress(name: str, shown: bool = True) -> _Bar:
    return _Bar(name, shown)


@app.command()
@argument("tree", required=False,
          help="Tree id or prefix, or a ref/node inside it (markdown, openai-jsonl, "
          "claude-code, codex and pi then take that path).")
@click.option("--all", "all_trees", is_flag=True, help="Every tree, archived ones too.")
@click.option("--format", default="json",
              help="json|jsonl (lossless), markdown, openai-jsonl, chatgpt; claude-code, codex, "
              "pi (one path as a session file the agent resumes; re-imported, what the agent "
              "added lands as a branch of that path).")
@click.option("--paths", default="leaves",
              help="openai-jsonl: one line per leaf, or per session.")
@click.option("--cwd", default=None,
              help="claude-code, codex, pi: the project folder the session names (the agent "
              "lists a session under its own project).")
@click.option("--output", "-o", type=PATH, help="Write to FILE (default: stdout).")
@JSON
@click.pass_context
def export(ctx: click.Context, tree: str | None, all_trees: bool, format: str, paths: str,
           cwd: str | None, output: Path | None, as_json: bool) -> None:
    """Write a tree (or --all) in a format other tools (or loomdb) read back. With --json
    one object: {"format", "trees", "output", "bytes"}, and "text" (the export itself)
    when it went to no file."""
    if (tree is None) == (not all_trees):
        raise InvalidInput("export", "give a TREE or --all (not both)")
    lm = loom(ctx)
    target = None if all_trees else tree
    if output is None and not as_json:
        lm.export(sys.stdout, target=target, format=format, paths=paths, cwd=cwd)
        sys.stdout.flush()
        return
    if output is None:
        buffer = io.StringIO()
        count = lm.export(buffer, target=target, format=format, paths=paths, cwd=cwd)
        text = buffer.getvalue()
        emit(True, {"format": format, "trees": count, "output": None,
                    "bytes": len(text.encode("utf-8")), "text": text})
        return
    count = lm.export_file(output, target=target, format=format, paths=paths, cwd=cwd)
    if as_json:
        emit(True, {"format": format, "trees": count, "output": str(output),
                    "bytes": output.stat().st_size})


@app.command()
@argument("folder", type=PATH,
          help="A Claude Code projects folder (~/.claude/projects), one project's folder, "
          "or another agent's sessions folder.")
@click.option("--format", default="auto", help=_WATCH_FORMATS)
@click.option("--interval", default=0.25, show_default=True, type=click.FloatRange(0.05, 60),
              help="Seconds between passes over the folder.")
@JSON
@click.pass_context
def watch(ctx: click.Context, folder: Path, format: str, interval: float,
          as_json: bool) -> None:
    """Follow a folder of agent session files: each new line becomes a node within a
    pass, a growing session extends its tree and moves its session. Started again, it
    resumes without importing anything twice. Ctrl-C stops it."""
    import time

    watcher = loom(ctx).watcher(folder, format)
    embed_behind(ctx)
    click.echo(f"watching {folder} (Ctrl-C stops)", err=True)
    try:
        while True:
            for done in watcher.step():
                _said(done, as_json)
            time.sleep(interval)
    except KeyboardInterrupt:
        click.echo("stopped", err=True)


def _said(done: Any, as_json: bool) -> None:
    """One line per session file that added something or failed."""
    report = done.report
    if as_json:
        if done.error or (report is not None and (report.nodes or report.errors)):
            click.echo(json.dumps(done.to_json()))
        return
    if done.error:
        click.echo(f"{done.path.name}: {done.error}")
    elif report is not None and (report.nodes or report.errors):
        trees = f", {len(report.trees)} new tree(s)" if report.trees else ""
        errors = f", {len(report.errors)} error(s)" if report.errors else ""
        click.echo(f"{done.path.name}: +{report.nodes} node(s){trees}{errors}")
