"""Subagents on the real local model: the child's context starts with the parent's path
(read through, not copied), its summary returns as a node in the parent's thread, both
directions are linked; and a model can spawn one itself with the `spawn_subagent` tool."""

from __future__ import annotations

from typing import Any

from loomdb import Loom
from loomdb.agents.loop import run_turn
from loomdb.agents.spawning import spawn
from loomdb.agents.subagents import children
from loomdb.agents.threads import thread_context


def test_spawn_reads_the_parent_path_and_reports_back(loom: Loom) -> None:
    _, root = loom.new_tree("We are naming a cat.", session="s", options={"seed": 1})
    asked = loom.append("s", "Suggest a name.", role="user")
    before = len(loom.tree_nodes(root.tree))
    done = spawn(loom, "s", "Pick one short cat name.", max_steps=1, max_tokens=12)
    child = loom.tree(done.tree)
    assert child.lineage == {"spawned": {"tree": root.tree, "node": asked.id, "session": "s"}}
    ctx = thread_context(loom, done.session)
    texts = [m["content"][0]["text"] for m in ctx["messages"]]
    assert texts[:3] == ["We are naming a cat.", "Suggest a name.", "Pick one short cat name."]
    assert len(loom.tree_nodes(done.tree)) == 2  # the task and the answer: nothing copied
    summary = loom.node("s")
    assert summary.id == done.summary_node and summary.parent == asked.id
    assert summary.origin["subagent"]["tree"] == done.tree and done.summary in summary.content[0]["text"]
    assert len(loom.tree_nodes(root.tree)) == before + 1
    [kid] = children(loom, asked.id)
    assert (kid.tree, kid.session, kid.summary_node) == (done.tree, done.session, summary.id)


def test_a_model_spawns_a_subagent_as_a_tool(loom: Loom) -> None:
    # the built-in tool, its input narrowed by the thread so the grammar leaves the
    # 135M model one task to write (it still writes the call itself)
    narrowed = {"name": "spawn_subagent", "description": "Give a task to a subagent.",
                "input_schema": {"type": "object", "required": ["task"], "properties": {
                    "task": {"type": "string", "enum": ["Pick a picnic spot."]}}}}
    _, root = loom.new_tree("Plan a picnic.", session="s", options={
        "tools": [narrowed], "tool_choice": {"name": "spawn_subagent"}, "seed": 2,
        "temperature": 0})
    turn = run_turn(loom, "s", max_steps=1, max_tokens=32)
    call, result = turn.nodes
    assert call.content[0]["name"] == "spawn_subagent"
    [kid] = children(loom, call.id)
    assert kid.task == call.content[0]["input"]["task"] == "Pick a picnic spot."
    assert kid.summary_node == result.id
    assert result.content[0]["tool_use_id"] == call.content[0]["id"]
    child_ctx = thread_context(loom, kid.session)
    assert child_ctx["messages"][0]["content"][0]["text"] == "Plan a picnic."
    assert loom.tree(kid.tree).lineage["spawned"]["node"] == call.id
    # the small model calls the tool again at every level: a model's nesting stops at two
    from loomdb.agents.subagents import MODEL_DEPTH
    from loomdb.agents.threads import spawn_depth

    assert max(spawn_depth(loom, t.id) for t in loom.trees()) <= MODEL_DEPTH == 2


def test_a_child_does_not_inherit_a_forced_call_and_nesting_is_bounded(loom: Loom) -> None:
    import pytest

    from loomdb import InvalidInput
    from loomdb.agents.subagents import MAX_DEPTH, start_child

    loom.new_tree("root", session="s", options={"tools": ["spawn_subagent"],
                                                 "tool_choice": "required", "top_k": 3})
    at = "s"
    for _ in range(MAX_DEPTH):
        _tree, at = start_child(loom, at, "go deeper", None)
    options = thread_context(loom, at)["options"]
    assert options["tools"] == ["spawn_subagent"] and options["top_k"] == 3
    assert "tool_choice" not in options
    with pytest.raises(InvalidInput, match="nest"):
        start_child(loom, at, "too deep", None)


def test_a_subagent_waiting_for_approval_reports_only_when_it_finishes(loom: Loom,
                                                                      tally: Any) -> None:
    from loomdb.agents.approvals import approve
    from loomdb.agents.identities import set_persona

    # the child's persona forces the tally call on its first step and needs approval
    set_persona(loom, "careful", approve=["tally"],
                params={"tool_choice": "required", "seed": 7, "temperature": 0})
    _, root = loom.new_tree("Keep count of visits.", session="s",
                            options={"tools": ["tally"]})
    asked = loom.append("s", "Count one for me.", role="user")
    before = len(loom.tree_nodes(root.tree))
    done = spawn(loom, "s", "Count one visit.", persona="careful", max_steps=1,
                 max_tokens=32, tools=tally.config)
    assert done.turn.pending is not None and done.summary_node is None
    assert loom.node("s").id == asked.id  # no placeholder in the parent's thread
    assert len(loom.tree_nodes(root.tree)) == before
    [kid] = children(loom, asked.id)
    assert kid.summary_node is None and tally.runs() == 0

    approve(loom, done.turn.pending, tools=tally.config)
    assert tally.runs() == 1
    summary = loom.node("s")  # the child finished: its summary arrives now, once
    assert summary.parent == asked.id and summary.origin["subagent"]["tree"] == done.tree
    assert summary.content[0]["text"].startswith("Subagent report (Count one visit.): ")
    assert "waiting for approval" not in summary.content[0]["text"]
    [kid] = children(loom, asked.id)
    assert kid.summary_node == summary.id
    assert len(loom.tree_nodes(root.tree)) == before + 1
