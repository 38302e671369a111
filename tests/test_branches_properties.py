"""Hypothesis on the git verbs, on both backends: a merge never changes a node either
branch had and the chain still verifies; a replay's new branch holds the source's user
turns in the same order; a path diffed with itself is empty, and diff(A, B) is
diff(B, A) read from the other side."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loomdb import InvalidInput, Loom
from loomdb.store.base import BODY, ROLE

#: short texts from a small alphabet, so two branches often say the same thing
TEXTS = st.lists(st.sampled_from(["yes", "no", "maybe", "a\nb", "a\nc", ""]).filter(bool),
                 min_size=1, max_size=6)
RUN = settings(max_examples=12, deadline=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture])
_names = itertools.count()


def grow(loom: Loom, main: list[str], fork_at: int, branch: list[str]) -> tuple[str, str]:
    """A tree: session A holding `main` (user and assistant in turn), session B forked
    at message `fork_at` of it holding `branch`; the two sessions' names."""
    n = next(_names)
    a, b = f"a{n}", f"b{n}"
    loom.new_tree(main[0], session=a)
    for i, text in enumerate(main[1:], 1):
        loom.append(a, text, role="assistant" if i % 2 else "user")
    at = loom.path(a)[min(fork_at, len(main) - 1)]
    loom.fork(at, b)
    depth = loom.node(at).depth
    for i, text in enumerate(branch, depth + 1):
        loom.append(b, text, role="assistant" if i % 2 else "user")
    return a, b


def user_turns(loom: Loom, headish: str, after: int) -> list[str]:
    return [r[BODY] for r in loom.path_rows(headish)[after:] if r[ROLE] == "user"]


@RUN
@given(main=TEXTS, fork_at=st.integers(0, 5), branch=TEXTS)
def test_a_merge_changes_no_existing_node_and_the_chain_verifies(
        loom: Loom, main: list[str], fork_at: int, branch: list[str]) -> None:
    a, b = grow(loom, main, fork_at, branch)
    tree = loom.ref(a).tree
    before = {n.id: n for n in loom.tree_nodes(tree)}
    me = loom.as_(loom.operator).branches
    try:
        node, created = me.merge(b, a)
    except InvalidInput:  # the branch's tip is on A's path: nothing to merge
        assert loom.ref(b).node in loom.path(a)
        return
    after = {n.id: n for n in loom.tree_nodes(tree)}
    assert created and set(after) - set(before) == {node.id}
    assert all(after[k] == v for k, v in before.items())
    assert loom.path(b)[-1] == loom.ref(b).node and loom.verify(tree).ok
    assert me.merge(b, a) == (node, False)


@RUN
@given(main=TEXTS, fork_at=st.integers(0, 5), branch=TEXTS, onto=st.integers(0, 5))
def test_a_replay_holds_the_sources_user_turns_in_order(
        loom: Loom, main: list[str], fork_at: int, branch: list[str], onto: int) -> None:
    a, b = grow(loom, main, fork_at, branch)
    base = loom.path(a)[min(onto, len(main) - 1)]
    again = f"r{next(_names)}"
    done = loom.as_(loom.operator).branches.replay(b, again, onto=base, generate=False)
    common = len(loom.path(base))
    shared = sum(1 for x, y in zip(loom.path(base), loom.path(b), strict=False) if x == y)
    assert user_turns(loom, again, common) == user_turns(loom, b, shared)
    assert len(done.turns) == len(user_turns(loom, b, shared)) and done.stopped is None


@RUN
@given(main=TEXTS, fork_at=st.integers(0, 5), branch=TEXTS)
def test_a_diff_with_itself_is_empty_and_each_side_mirrors_the_other(
        loom: Loom, main: list[str], fork_at: int, branch: list[str]) -> None:
    a, b = grow(loom, main, fork_at, branch)
    me = loom.as_(loom.operator).branches
    assert me.diff(a, a)["entries"] == [] and me.diff(b, b)["changed"] == 0
    ab, ba = me.diff(a, b), me.diff(b, a)
    assert (ab["ancestor"], ab["common"], ab["changed"]) == (
        ba["ancestor"], ba["common"], ba["changed"])
    swap = {"added": "removed", "removed": "added"}
    for x, y in zip(ab["entries"], ba["entries"], strict=True):
        assert (x["left"], x["right"], x["message"]) == (y["right"], y["left"], y["message"])
        assert swap.get(x["status"], x["status"]) == y["status"]
