"""The merge's one-query climb (`branching.merge.near`) finds what the step-by-step
climb finds, on both backends: the common ancestor, and the nodes after it on each
side, for branches parting at every distance it reaches (and none past it), versions
of a message included."""

from __future__ import annotations

import pytest

from loomdb import Loom
from loomdb.branching.merge import NEAR, climb, near


@pytest.mark.parametrize("back", [0, 1, 3, NEAR - 1, NEAR + 2])
def test_near_agrees_with_the_climb(loom: Loom, back: int) -> None:
    tree, _ = loom.new_tree("start", session="main")
    for i in range(NEAR + 4):
        loom.append("main", f"m{i}", role="user" if i % 2 else "assistant")
    path = loom.path("main")
    loom.fork(path[-1 - back], "side")
    for i in range(2):
        loom.append("side", f"s{i}", role="user" if i % 2 else "assistant")
    edited = loom.edit(path[-1], "m-edited")  # a version: the same slot as the head
    tip = loom.path("side")[-1]
    for into in (path[-1], edited.id):
        slow = climb(loom, into, tip)
        fast = near(loom, tree.id, into, tip)
        assert slow is not None
        if back > NEAR:  # the head is `back` steps below the ancestor
            assert fast is None
            continue
        assert fast is not None
        assert fast[0] == slow[0].id
        assert fast[2] == [n.id for n in slow[2]]
        assert fast[1] == []  # nothing there names the tip
    assert near(loom, tree.id, path[-1], path[-1])[2] == []
