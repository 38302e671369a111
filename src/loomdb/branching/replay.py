"""Replaying a path's user turns onto another base, or on another model.

`replay PATH --onto NODE --session NAME` forks NAME at NODE, then appends, in order,
each user turn of PATH after the place PATH and NODE part (compared by slot: after an
edit, NODE is the edited version and the turns replayed are the ones after it), each
answered by the model before the next is sent (or left unanswered, `generate=False`).
When NODE is itself a user turn, it is answered first. Without `--onto`, NODE is
PATH's first message: the whole conversation again, from its first turn (the
evaluation use; `diff` then compares the two).

A turn carrying tool results answers a tool call of the model that wrote the path.
When the new thread offers tools (its options name them, or its session is bound to a
persona: `runs_tools`), each turn is the agent's tool loop, which makes and runs its
own calls with the tools configured, so the old results are left out; otherwise the
replay stops before such a turn and says so (turns up to there stay written), as it
does when a turn waits for a person to approve a call. Each
replayed turn's origin names the turn it replays (`{"replayed_from": id}`). A model
that fails stops the replay the same way: what was written stays, the reason is
returned. The overhead per turn is one append; the cost is the model's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import LoomError
from ..headish import Position
from ..store.base import BODY, ID, ROLE
from .merge import parting

if TYPE_CHECKING:
    from ..loom import Loom

#: answers the turn at a session's head (moving it): the new nodes' ids, and why the
#: replay must stop there (each reason a sentence; none: it goes on)
Answer = Callable[[str], tuple[list[str], list[str]]]


@dataclass
class Replayed:
    """What a replay did: the session made, the turns appended, why it stopped early."""

    session: str
    tree: str
    onto: str
    ancestor: str | None
    turns: list[dict[str, Any]] = field(default_factory=list)
    stopped: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"session": self.session, "tree": self.tree, "onto": self.onto,
                "ancestor": self.ancestor, "turns": self.turns, "stopped": self.stopped}


def user_turns(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The rows a replay sends again: user messages (and, to stop at, tool turns)."""
    return [r for r in rows if r[ROLE] in ("user", "tool")]


def _tool_turn(row: tuple[Any, ...]) -> bool:
    return row[ROLE] == "tool" or any(
        b.get("type") == "tool_result" for b in json.loads(row[BODY]))


def replay(lm: Loom, source: Position, onto: Position | None, session: str, *,
           answer: Answer | None,
           runs_tools: Callable[[str], bool] | None = None) -> Replayed:
    """Replay the user turns of `source` onto `onto` (default: its first message) as
    the new session `session`; `answer` None leaves every turn unanswered;
    `runs_tools(session)` says whether its answers run the thread's tools."""
    if onto is None:
        onto = Position(str(lm.tree(source.tree).root), source.tree)
    if onto.tree == source.tree:
        ancestor, _, since = parting(lm, onto, source)
    else:
        ancestor, since = None, lm.path_rows(source)
    lm.fork(onto, session)
    done = Replayed(session, onto.tree, onto.node, ancestor)
    if answer is not None and lm.node(onto).role == "user" and not _answered(answer, done):
        return done
    for row in user_turns(since):
        if _tool_turn(row):
            if answer is not None and runs_tools is not None and runs_tools(session):
                continue  # the replayed model made its own calls and had them run
            done.stopped = (f"message {row[ID]} carries tool results and the thread "
                            "offers no tools: tool turns are replayed only by the tool "
                            "loop, with the tools configured (`options.tools`)")
            return done
        node = lm.append(session, json.loads(row[BODY]), role="user",
                         origin={"replayed_from": row[ID]})
        done.turns.append({"from": row[ID], "node": node.id, "answers": []})
        if answer is not None and not _answered(answer, done):
            return done
    return done


def _answered(answer: Answer, done: Replayed) -> bool:
    """Ask for the answer at the session's head; False (the reason kept) when the
    model failed."""
    try:
        ids, errors = answer(done.session)
    except LoomError as exc:
        done.stopped = f"the model failed: {exc}"
        return False
    if done.turns:
        done.turns[-1]["answers"] = ids
    if errors or not ids:
        done.stopped = "; ".join(errors) or "the model gave no answer"
        return False
    return True
