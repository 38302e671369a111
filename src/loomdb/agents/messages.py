"""Supervised agent-to-agent messages (seed 000 use case 2).

One agent's session proposes a message to another session; nothing reaches the
target until its supervisor approves it (as written, or amended). The approved text
lands in the target session as a user node whose origin records the sender, the
supervisor, the proposing node and the original text; the proposal keeps its state
(proposed, approved, rejected). A decision is a compare-and-swap on the proposal's
state, in the same transaction as the node it writes: deciding twice fails cleanly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..content import check_text
from ..errors import InvalidInput, NotFound
from ..model import Node, new_id, now
from . import AGENTS
from .identities import binding

if TYPE_CHECKING:
    from ..loom import Loom


@dataclass(frozen=True)
class Message:
    id: str
    from_session: str
    from_node: str
    to_session: str
    sender: str
    supervisor: str
    text: str
    original: str
    state: str
    reason: str | None
    node: str | None
    created_at: str
    decided_at: str | None

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


_COLUMNS = ("id, from_session, from_node, to_session, sender, supervisor, text, original, "
            "state, reason, node, created_at, decided_at")


def propose(loom: Loom, from_session: str, to_session: str, text: str, *,
            supervisor: str | None = None, sender: str | None = None) -> Message:
    """A pending message from one session to another. The supervisor defaults to the
    target session's agent, else this store's actor."""
    _check_text(text)
    source, target = loom.ref(from_session), loom.ref(to_session)
    for ref in (source, target):
        if ref.kind != "session":
            raise InvalidInput(f"session {ref.name!r}", f"is a {ref.kind}, not a session")
    if source.name == target.name:
        raise InvalidInput("propose", "a session cannot message itself")
    who = sender or binding(loom, source.name).agent or source.name
    boss = supervisor or binding(loom, target.name).agent or loom.actor
    msg = Message(new_id(), source.name, loom.resolve(source.name).node, target.name, who,
                  boss, text, text, "proposed", None, None, now(), None)
    with loom.unit(AGENTS) as db:
        db.execute(f"INSERT INTO agent_messages ({_COLUMNS}) VALUES "
                   "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   tuple(getattr(msg, k) for k in msg.__dataclass_fields__))
    return msg


def _check_text(text: str) -> None:
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("--text", "a message needs text")
    check_text(text, "--text")


def inbox(loom: Loom, supervisor: str | None, *, state: str = "proposed") -> list[Message]:
    """A supervisor's messages in a state (pending ones by default), oldest first;
    every supervisor's when `supervisor` is None."""
    with loom.unit(AGENTS) as db:
        if supervisor is None:
            rows = db.execute(f"SELECT {_COLUMNS} FROM agent_messages WHERE state = ? "
                              "ORDER BY created_at", (state,))
        else:
            rows = db.execute(f"SELECT {_COLUMNS} FROM agent_messages WHERE supervisor = ? "
                              "AND state = ? ORDER BY created_at", (supervisor, state))
    return [Message(*r) for r in rows]


def message(loom: Loom, mid: str) -> Message | None:
    with loom.unit(AGENTS) as db:
        row = db.one(f"SELECT {_COLUMNS} FROM agent_messages WHERE id = ?", (mid,))
    return Message(*row) if row else None


def approve(loom: Loom, mid: str, *, text: str | None = None) -> tuple[Message, Node]:
    """Deliver a proposed message (with `text`, amended) to its target session."""
    if text is not None:
        _check_text(text)
    with loom.unit(AGENTS) as db:
        msg = _decide(db, loom, mid, "approved", None, text)
        origin = {"message": {"id": msg.id, "from": msg.from_session, "from_node": msg.from_node,
                              "sender": msg.sender, "supervisor": msg.supervisor,
                              "original": msg.original, "amended": msg.text != msg.original}}
        node = loom.append(msg.to_session, msg.text, role="user", source="agent",
                           author=msg.sender, origin=origin)
        db.execute("UPDATE agent_messages SET node = ? WHERE id = ?", (node.id, msg.id))
    return message(loom, mid) or msg, node


def amend(loom: Loom, mid: str, text: str) -> tuple[Message, Node]:
    """Approve with the supervisor's text instead of the sender's."""
    return approve(loom, mid, text=text)


def reject(loom: Loom, mid: str, *, reason: str | None = None) -> Message:
    """Refuse a proposed message: nothing reaches the target."""
    with loom.unit(AGENTS) as db:
        return _decide(db, loom, mid, "rejected", reason, None)


def _decide(db: Any, loom: Loom, mid: str, state: str, reason: str | None,
            text: str | None) -> Message:
    rows = db.execute(
        f"UPDATE agent_messages SET state = ?, reason = ?, text = COALESCE(?, text), "
        f"decided_at = ? WHERE id = ? AND state = 'proposed' RETURNING {_COLUMNS}",
        (state, reason, text, now(), mid))
    if rows:
        return Message(*rows[0])
    found = message(loom, mid)
    if found is None:
        raise NotFound("message", mid)
    raise InvalidInput(f"message {mid}", f"is {found.state}, not proposed")
