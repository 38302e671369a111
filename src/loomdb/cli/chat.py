"""`loomdb chat`: an interactive loop that extends a session, streaming each answer."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console

from ..edge import error_json
from ..errors import LoomError, NotFound, ProviderError


def run(
    loom: Any, headish: str | None, *, model: str | None, system: str | None,
    max_tokens: int | None, session: str | None, config: Any, as_json: bool = False,
) -> None:
    """Read a line, append it to the session, stream the model's answer; Ctrl-D ends.

    With `as_json` nothing streams: each turn prints one JSON object on its own line
    (`{"session", "node", "text", "moved"}`, or `{"error": ...}` for a turn that failed,
    the loop going on), so a program can drive the chat through a pipe."""
    console = Console(highlight=False, stderr=True)
    name = loom.chat_session(headish, session)
    where = f"session {name}" if _known(loom, name) else "a new tree"
    console.print(f"[dim]Chatting in {where} with {model or 'the default model'}. "
                  "Ctrl-D or 'exit' ends.[/dim]")
    while True:
        try:
            line = input("" if as_json else "> ")  # JSON mode: stdout holds only JSON
        except EOFError:
            break
        if line.strip() in ("exit", "quit"):
            break
        if not line.strip():
            continue
        try:
            turn = loom.chat_turn(name, line, model=model, system=system, max_tokens=max_tokens,
                                  stream=None if as_json else _echo, config=config)
            sys.stdout.write(_turn_json(turn) if as_json else "\n")
        except LoomError as exc:
            if as_json:
                sys.stdout.write(json.dumps(error_json(exc), ensure_ascii=False) + "\n")
                sys.stdout.flush()
            elif isinstance(exc, ProviderError):
                console.print(f"[red]model error:[/red] {exc} (your message is kept)")
            else:
                console.print(f"[red]error:[/red] {exc}")
            continue
        if not turn.moved:
            console.print("[yellow]the session moved meanwhile; the answer is kept as a branch[/yellow]")
    known = _known(loom, name)
    console.print(f"[dim]bye — continue with: loomdb chat {name}[/dim]" if known else "")


def _known(loom: Any, name: str) -> bool:
    """Whether a ref of this name exists yet (a new chat makes its session on the
    first turn)."""
    try:
        loom.ref(name)
    except NotFound:
        return False
    return True


def _turn_json(turn: Any) -> str:
    """One turn as one JSON line: the session, the answer's node and text."""
    node = turn.generated.nodes[0] if turn.generated.nodes else None
    text = "".join(b.get("text", "") for b in node.content) if node is not None else ""
    line = {"session": turn.session, "node": node.id if node else None, "text": text,
            "moved": turn.moved}
    return json.dumps(line, ensure_ascii=False) + "\n"


def _echo(job: int, index: int, delta: str) -> None:
    if job == 0 and index == 0:
        sys.stdout.write(delta)
        sys.stdout.flush()
