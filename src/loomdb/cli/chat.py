"""`loomdb chat`: an interactive loop that extends a session, streaming each answer."""

from __future__ import annotations

import os
import sys
from typing import Any

from rich.console import Console

from ..errors import LoomError, ProviderError


def run(
    loom: Any, headish: str | None, *, model: str | None, system: str | None,
    max_tokens: int | None, session: str | None, config: Any,
) -> None:
    """Read a line, append it to the session, stream the model's answer; Ctrl-D ends."""
    from ..compaction import maybe_compact
    from ..generation import generate

    console = Console(highlight=False, stderr=True)
    name = _session(loom, headish, session)
    where = f"session {name}" if name else "a new tree"
    console.print(f"[dim]Chatting in {where} with {model or 'the default model'}. "
                  "Ctrl-D or 'exit' ends.[/dim]")
    while True:
        try:
            line = input("> ")
        except EOFError:
            break
        if line.strip() in ("exit", "quit"):
            break
        if not line.strip():
            continue
        try:
            if name is None or loom.backend.get_ref(name) is None:
                name = name or _fresh_name(loom)
                loom.new_tree(line, system=system, session=name)
            else:
                loom.append(name, line)
            result = generate(loom, name, models=[model] if model else [], max_tokens=max_tokens,
                              stream=_echo, config=config, environ=os.environ)
            sys.stdout.write("\n")
            maybe_compact(loom, name, config=config, environ=os.environ)
        except ProviderError as exc:
            console.print(f"[red]model error:[/red] {exc} (your message is kept)")
            continue
        except LoomError as exc:
            console.print(f"[red]error:[/red] {exc}")
            continue
        if not result.moved:
            console.print("[yellow]the session moved meanwhile; the answer is kept as a branch[/yellow]")
    console.print(f"[dim]bye — continue with: loomdb chat {name}[/dim]" if name else "")


def _echo(job: int, index: int, delta: str) -> None:
    if job == 0 and index == 0:
        sys.stdout.write(delta)
        sys.stdout.flush()


def _session(loom: Any, headish: str | None, session: str | None) -> str | None:
    """The session to extend: HEADISH if it is one, else a new one forked at HEADISH."""
    if headish is None:
        return session
    pos = loom.resolve(headish)
    if pos.session and session in (None, pos.session):
        return pos.session  # type: ignore[no-any-return]
    name = session or _fresh_name(loom)
    loom.fork(pos, name)
    return name


def _fresh_name(loom: Any) -> str:
    from ..model import new_id

    return f"chat-{new_id()[-8:].lower()}"
