"""Chat turns: a line from a person appended to a session, the model's answer after it.

`loomdb chat` (and later an HTTP chat endpoint) is a loop over `turn`: the session is
made on the first turn when it does not exist yet (a new tree), the answer is
generated and stored with its provenance, and the thread is compacted when its
options ask for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .compaction import maybe_compact
from .generation import Generated, Stream, generate
from .model import new_id
from .storage_ops import storage

if TYPE_CHECKING:
    from .loom import Loom
    from .providers.config import ProvidersConfig


@dataclass
class Turn:
    """One chat turn: the session it extended and what generation wrote."""

    session: str
    generated: Generated

    @property
    def moved(self) -> bool:
        """False when someone else moved the session meanwhile (the answer is a branch)."""
        return self.generated.moved


def fresh_name() -> str:
    """A new session name for a chat that starts a tree: `chat-<8 characters>`."""
    return f"chat-{new_id()[-8:].lower()}"


def start(loom: Loom, headish: str | None, session: str | None) -> str:
    """The session a chat extends: HEADISH when it names one, else a new session forked
    at HEADISH; with no HEADISH, `session` or a fresh name (a session that does not
    exist yet is made, with a new tree, on the first turn)."""
    if headish is None:
        return session or fresh_name()
    pos = loom.resolve(headish)
    if pos.session and session in (None, pos.session):
        return pos.session
    name = session or fresh_name()
    loom.fork(pos, name)
    return name


def turn(
    loom: Loom,
    session: str,
    text: str,
    *,
    model: str | None = None,
    system: str | None = None,
    max_tokens: int | None = None,
    stream: Stream | None = None,
    config: ProvidersConfig | None = None,
    environ: Mapping[str, str] | None = None,
) -> Turn:
    """Append `text` to `session` (made, with a new tree, when it does not exist), then
    generate the answer; the user's line stays even when the model fails."""
    if storage(loom).find_ref(session) is None:
        loom.new_tree(text, system=system, session=session)
    else:
        loom.append(session, text)
    result = generate(loom, session, models=[model] if model else [], max_tokens=max_tokens,
                      stream=stream, config=config, environ=environ)
    maybe_compact(loom, session, config=config, environ=environ)
    return Turn(session, result)
