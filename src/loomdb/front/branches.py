"""The git verbs of conversations for a caller (`loom.as_(caller).branches`): diff two
paths, merge a branch's outcome into another line, replay a path's user turns onto a
new base or model, and the tail-fork (a new tree from a message, nothing before it).
Every name is resolved against what the caller sees; the work is `loomdb.branching`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..model import Node, Tree
from ..store.base import BODY, ROLE
from .base import AreaDoor

if TYPE_CHECKING:
    from ..branching.replay import Replayed
    from ..branching.summary import Summary


class Branches(AreaDoor):
    """Comparing and combining the branches of the caller's conversations."""

    def diff(self, left: str, right: str) -> dict[str, Any]:
        """Two paths aligned from their common ancestor (see `branching.diff`): the
        ancestor, how many messages they share, then one entry per message after it."""
        from ..branching.diff import diff_rows

        a, b = self.sight.position(left), self.sight.position(right)
        found = diff_rows(self.loom.path_rows(a), self.loom.path_rows(b))
        return {"left": {"headish": left, "node": a.node, "tree": a.tree},
                "right": {"headish": right, "node": b.node, "tree": b.tree}, **found}

    def fork_fresh(self, at: str, name: str, *,
                   summary: str | None = None) -> tuple[Tree, Node]:
        """A new tree of the caller's whose root holds the message at `at` (or a summary
        by the model `summary` of the path up to it), a session `name` at the root, and
        lineage "continued from" that message (see `branching.fresh`)."""
        from ..branching.fresh import fresh_fork

        pos = self.sight.position(at)
        summarized = None
        if summary is not None:
            summarized = self._summary(pos.tree, self.loom.context(pos)["messages"], summary)
        with self.sight.naming_ref(name), self.sight.atomic():
            tree, root = fresh_fork(self.loom, pos, name, summarized=summarized)
            self.sight.claim([tree.id])
        return self.loom.tree(tree.id), root

    def merge(self, branch: str, into: str, *, text: str | None = None,
              summary: str | None = None) -> tuple[Node, bool]:
        """Bring `branch`'s outcome into `into` (see `branching.merge`): one node
        appended there with the branch's tip as a context source, carrying the user's
        `text`, or the model `summary`'s summary of the branch since the common
        ancestor, or nothing more. (the merge node, whether this call wrote it: a tip
        merged already answers the merge made then)."""
        from ..branching.merge import merge, parting

        b, i, lm = self.sight.position(branch), self.sight.position(into), self.loom
        summarized = None
        if summary is not None and b.tree == i.tree:
            _, _, since = parting(lm, i, b)
            messages = [{"role": r[ROLE], "content": json.loads(r[BODY])} for r in since]
            summarized = self._summary(b.tree, messages, summary)
        return merge(lm, b, i, text=text, summarized=summarized)

    def replay(self, path: str, session: str, *, onto: str | None = None,
               models: Sequence[str] = (), n: int = 1, max_tokens: int | None = None,
               generate: bool = True) -> Replayed:
        """The user turns of `path` appended in order onto `onto` (default: its first
        message) as the new session `session`, each answered by `models` (N each; the
        session follows the first) before the next, or left unanswered with
        `generate=False`; a thread offering tools answers with the tool loop, whose
        own calls replace the path's tool turns (see `branching.replay`)."""
        from ..branching.replay import replay
        from .agents import Agents
        from .nodes import Nodes

        source = self.sight.position(path)
        base = self.sight.position(onto) if onto is not None else None
        nodes, agents = Nodes(self.sight, self.runtime), Agents(self.sight, self.runtime)
        answer = None
        if generate:

            def answer(at: str) -> tuple[list[str], list[str]]:
                if agents.wants_turn(at):  # the tool loop: the thread offers tools
                    turn = agents.turn(at, models=list(models), max_tokens=max_tokens)
                    why = [] if turn.answer else [
                        f"the tool loop is waiting for approval at {turn.pending}"
                        if turn.pending else "the tool loop reached its step limit"]
                    return [node.id for node in turn.nodes], why
                done = nodes.generate(at, models=models, n=n, max_tokens=max_tokens)
                return [node.id for node in done.nodes], [
                    f"the model failed: {e}" for e in done.errors]

        with self.sight.naming_ref(session):
            return replay(self.loom, source, base, session, answer=answer,
                          runs_tools=agents.wants_turn)

    def _summary(self, tree: str, messages: list[dict[str, Any]], model: str) -> Summary:
        """The model's summary of `messages` (over HTTP, a caller names only the
        operator's served aliases)."""
        from ..branching.summary import summarize

        rt = self.runtime
        if rt.served_only:
            from ..providers.served import check_request

            check_request([model], 1, {}, rt.config, rt.limits or self.loom.limits)
        return summarize(self.loom, tree, messages, model, config=rt.config,
                         environ=rt.environ)


__all__ = ["Branches"]
