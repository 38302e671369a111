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
    console = Console(highlight=False, stderr=True)
    name = loom.chat_session(headish, session)
    where = f"session {name}" if loom.find_ref(name) is not None else "a new tree"
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
            turn = loom.chat_turn(name, line, model=model, system=system, max_tokens=max_tokens,
                                  stream=_echo, config=config, environ=os.environ)
            sys.stdout.write("\n")
        except ProviderError as exc:
            console.print(f"[red]model error:[/red] {exc} (your message is kept)")
            continue
        except LoomError as exc:
            console.print(f"[red]error:[/red] {exc}")
            continue
        if not turn.moved:
            console.print("[yellow]the session moved meanwhile; the answer is kept as a branch[/yellow]")
    known = loom.find_ref(name) is not None
    console.print(f"[dim]bye — continue with: loomdb chat {name}[/dim]" if known else "")


def _echo(job: int, index: int, delta: str) -> None:
    if job == 0 and index == 0:
        sys.stdout.write(delta)
        sys.stdout.flush()
