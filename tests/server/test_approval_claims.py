"""A decision on a waiting tool call claims it only when its run can start (issue 35,
point 2): an approval whose tool is not configured fails and leaves the call waiting,
for the inbox and `loomdb approve` to take later; a denial runs nothing, so it needs
no tool at all. Library level, both backends; the same through `loomdb serve` is
test_serve_tools.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_calls import Tally, held

from loomdb import InvalidInput, Loom
from loomdb.agents.approvals import approve, deny, pending, tool_call


def test_an_approval_that_cannot_start_leaves_the_call_waiting(loom: Loom,
                                                                tmp_path: Path) -> None:
    tally = Tally(tmp_path)
    node = held(loom, tally, "visits")
    with pytest.raises(InvalidInput, match="tally"):
        approve(loom, node)  # no tools.toml: the tool cannot be found
    assert tool_call(loom, node).state == "pending"
    assert [p.node for p in pending(loom)] == [node] and tally.runs() == 0
    turn = approve(loom, node, tools=tally.config)  # configured now: it runs, once
    assert tally.runs() == 1 and tool_call(loom, node).state == "done"
    [result] = turn.nodes
    assert result.parent == node and result.content[0]["content"][0]["text"] == "tally: 1"
    with pytest.raises(InvalidInput, match="is done, not pending"):
        approve(loom, node, tools=tally.config)


def test_a_denial_needs_no_tool_and_refuses_every_call_of_the_step(loom: Loom,
                                                                   tmp_path: Path) -> None:
    tally = Tally(tmp_path)
    node = held(loom, tally, "visits")
    turn = deny(loom, node, reason="not today")  # no tools.toml at all
    [result] = turn.nodes
    [block] = result.content
    assert block["is_error"] and "denied: not today" in block["content"][0]["text"]
    assert tool_call(loom, node).state == "denied" and pending(loom) == []
    assert tally.runs() == 0 and loom.resolve("visits").node == result.id
