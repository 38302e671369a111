"""The one internal event stream of a streamed exchange, whatever the wire.

A model client streams what it can: every client gives text as it comes (the
`(choice, text)` callback), and a client that sees its provider's blocks (the Anthropic
client: thinking, signatures, tool calls with their JSON arguments) gives them through
the `providers.base.Sink` calls too. `Streamer` turns both into a few plain events:

    Begin                         the model started answering (once)
    Open(choice, block)           a block begins: {"type": "text", "text": ""},
                                  {"type": "thinking", "thinking": ""} or
                                  {"type": "tool_use", "id", "name", "input": {}}
    Delta(choice, kind, text)     kind: text | thinking | signature | input_json
    Close(choice)                 the open block ends
    End(result)                   the answers, recorded (after the commit)

and, when the model has answered, `finish` sends whatever the client did not stream
(a local model's tool call, read back from its constrained reply; an OpenAI
provider's tool calls) as whole blocks, in the answer's order, so every wire sees
every block of the content that is stored. A wire module turns these events into
its own chunks (`openai_chat.Chunks`, `responses.Chunks`, `anthropic_messages.Chunks`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..providers.base import Sink

if TYPE_CHECKING:
    from ..providers.base import Completion
    from .exchange import Result


@dataclass(frozen=True)
class Begin:
    """The model started answering."""


@dataclass(frozen=True)
class Open:
    """A block of answer `choice` begins (its type and, for a tool call, id and name)."""

    choice: int
    block: dict[str, Any]


@dataclass(frozen=True)
class Delta:
    """A piece of the open block: text, thinking, signature or input_json."""

    choice: int
    kind: str
    text: str


@dataclass(frozen=True)
class Close:
    """The open block of answer `choice` ends."""

    choice: int


@dataclass(frozen=True)
class End:
    """Every answer is in and recorded."""

    result: Result


Event = Begin | Open | Delta | Close | End
Emit = Callable[[Event], None]
_DELTA_OF = {"text": "text", "thinking": "thinking", "tool_use": "input_json"}


def skeleton(block: dict[str, Any]) -> dict[str, Any]:
    """What an Open carries of a block: its type, and a tool call's id and name."""
    kind = block["type"]
    if kind == "tool_use":
        return {"type": "tool_use", "id": block.get("id") or "", "name": block.get("name") or "",
                "input": {}}
    if kind == "thinking":
        return {"type": "thinking", "thinking": ""}
    return {"type": "text", "text": ""}


class Streamer(Sink):
    """A model client's stream callback making the events above (module docstring)."""

    def __init__(self, emit: Emit) -> None:
        self.emit = emit
        self.begun = False
        self.opened: dict[int, str | None] = {}
        self.sent: dict[int, list[str]] = {}

    def _begin(self) -> None:
        if not self.begun:
            self.begun = True
            self.emit(Begin())

    def __call__(self, choice: int, text: str) -> None:
        if not text:
            return
        if self.opened.get(choice) != "text":
            self.open(choice, {"type": "text", "text": ""})
        self.emit(Delta(choice, "text", text))

    def open(self, choice: int, block: dict[str, Any]) -> None:
        self._begin()
        self.close(choice)
        kind = block.get("type")
        if kind not in _DELTA_OF:
            return  # a block loomdb does not keep (redacted thinking...): not shown
        self.opened[choice] = kind
        self.sent.setdefault(choice, []).append(kind)
        self.emit(Open(choice, skeleton(block)))

    def delta(self, choice: int, kind: str, text: str) -> None:
        if self.opened.get(choice) is None or not text:
            return
        self.emit(Delta(choice, kind, text))

    def close(self, choice: int) -> None:
        if self.opened.get(choice) is not None:
            self.opened[choice] = None
            self.emit(Close(choice))

    def finish(self, answers: Sequence[Completion]) -> None:
        """Close what is open and send every block of the answers not streamed."""
        self._begin()
        for choice, answer in enumerate(answers):
            self.close(choice)
            streamed = Counter(self.sent.get(choice, []))
            for block in answer.content:
                kind = block["type"]
                if kind not in _DELTA_OF:
                    continue
                if streamed[kind] > 0:
                    streamed[kind] -= 1
                    continue
                whole = whole_text(block)
                if kind == "text" and not whole:
                    continue
                self.open(choice, block)
                self.delta(choice, _DELTA_OF[kind], whole)
                if kind == "thinking" and block.get("signature"):
                    self.delta(choice, "signature", block["signature"])
                self.close(choice)


def whole_text(block: dict[str, Any]) -> str:
    """A block's whole text as one delta (a tool call's input as JSON)."""
    kind = block["type"]
    if kind == "tool_use":
        return json.dumps(block.get("input") or {}, ensure_ascii=False)
    return str(block.get(kind) or "")
