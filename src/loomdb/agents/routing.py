"""Routing (seed 004): every target resolves to a thread, i.e. a node.

    thread  NODE  -> continue that node
    session NAME  -> the session's head
    persona P     -> the persona's most recently bound session, or a new one (`new`)
    smart   TEXT  -> the session whose recent text best matches TEXT

Smart routing is a plain full-text match (shared words, weighted by how rare they are
among the sessions) over each session's last messages; a search area can take its
place when the store has one.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..content import plain_text
from ..errors import InvalidInput, NotFound
from .identities import get_persona, sessions_of

if TYPE_CHECKING:
    from ..loom import Loom
    from ..model import Node

KINDS = ("thread", "session", "persona", "smart")
#: how many of a session's last messages smart routing reads
RECENT = 20
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Route:
    """Where to write: `headish`, or (`headish` None) a new session `new` for `persona`."""

    headish: str | None
    why: str
    new: str | None = None
    persona: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"headish": self.headish, "why": self.why}
        if self.new is not None:
            out["new_session"] = self.new
        return out


def parse_route(text: str) -> tuple[str, str]:
    """`KIND:VALUE` as given to `--route`."""
    kind, sep, value = (text or "").partition(":")
    if not sep or kind not in KINDS or not value.strip():
        raise InvalidInput("--route", f"expected one of {', '.join(k + ':VALUE' for k in KINDS)}, got {text!r}")
    return kind, value


def route(loom: Loom, kind: str, value: str) -> Route:
    """Resolve one routing target to where the next message goes."""
    if kind == "thread":
        node = loom.resolve(value).node
        return Route(node, f"thread: continue node {node}")
    if kind == "session":
        ref = loom.ref(value)
        if ref.kind != "session":
            raise InvalidInput(f"session {value!r}", f"is a {ref.kind}, not a session")
        return Route(ref.name, f"session: {ref.name} is at {loom.resolve(ref.name).node}")
    if kind == "persona":
        return _persona(loom, value)
    if kind == "smart":
        return _smart(loom, value)
    raise InvalidInput("route", f"unknown kind {kind!r}; use {', '.join(KINDS)}")


def _persona(loom: Loom, name: str) -> Route:
    get_persona(loom, name)
    live = {r.name for r in loom.refs("session")}
    for session in sessions_of(loom, name):
        if session in live:
            return Route(session, f"persona: {name}'s most recent session is {session}")
    new = f"{name}/main"
    return Route(None, f"persona: {name} has no session yet; a new one, {new}, starts",
                 new=new, persona=name)


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text) if len(w) > 2]


def _smart(loom: Loom, text: str) -> Route:
    wanted = set(_words(text))
    if not wanted:
        raise InvalidInput("route smart", "give some words to match")
    bags: dict[str, Counter[str]] = {}
    for ref in loom.refs("session"):
        messages = loom.context(ref.name)["messages"][-RECENT:]
        bags[ref.name] = Counter(_words(" ".join(plain_text(m["content"]) for m in messages)))
    if not bags:
        raise NotFound("session to route to", text)
    df = Counter(w for bag in bags.values() for w in set(bag) & wanted)
    scores = {name: sum(math.log(1 + bag[w]) * math.log(1 + len(bags) / df[w])
                        for w in wanted if bag[w]) for name, bag in bags.items()}
    best = max(scores, key=lambda n: (scores[n], loom.ref(n).updated_at))
    if scores[best] <= 0:
        raise NotFound("session matching", text, sorted(bags)[:10])
    shared = sorted(w for w in wanted if bags[best][w])
    return Route(best, f"smart: {best} shares {', '.join(shared)} (score {scores[best]:.2f})")


def write(loom: Loom, target: Route, content: Any, **fields: Any) -> Node:
    """Add a message where `target` routes: after its headish, or as the root of a new
    tree whose new session is bound to the persona (one transaction)."""
    if target.headish is not None:
        return loom.append(target.headish, content, **fields)
    from . import AGENTS
    from .identities import bind_session

    assert target.new is not None and target.persona is not None
    role = fields.get("role", "user")
    with loom.unit(AGENTS):
        _tree, root = loom.new_tree(content, session=target.new, role=role,
                                    author=fields.get("author"),
                                    source=fields.get("source", "human"))
        bind_session(loom, target.new, persona=target.persona)
    return root
