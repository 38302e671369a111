"""Supervised agent-to-agent messages: nothing reaches the target before approval; the
approved (or amended) text lands with an origin naming sender, supervisor and the
original; a decision is taken once."""

from __future__ import annotations

import pytest

from loomdb import InvalidInput, Loom, NotFound
from loomdb.agents.identities import add_agent, bind_session
from loomdb.agents.messages import amend, approve, inbox, message, propose, reject


@pytest.fixture
def two(loom: Loom) -> Loom:
    loom.new_tree("I research.", session="a")
    loom.new_tree("I write.", session="b")
    add_agent(loom, "researcher", "model")
    add_agent(loom, "editor", "human")
    bind_session(loom, "a", agent="researcher")
    bind_session(loom, "b", agent="editor")
    return loom


def test_a_message_waits_for_its_supervisor_then_lands_with_its_origin(two: Loom) -> None:
    before = two.resolve("b").node
    msg = propose(two, "a", "b", "Found three sources.")
    assert msg.supervisor == "editor" and msg.sender == "researcher"
    assert two.resolve("b").node == before
    assert [m.id for m in inbox(two, "editor")] == [msg.id]
    done, node = approve(two, msg.id)
    assert done.state == "approved" and done.node == node.id
    assert two.resolve("b").node == node.id and node.parent == before
    assert node.content == [{"type": "text", "text": "Found three sources."}]
    assert node.author == "researcher" and node.source == "agent"
    assert node.origin["message"] == {
        "id": msg.id, "from": "a", "from_node": two.resolve("a").node, "sender": "researcher",
        "supervisor": "editor", "original": "Found three sources.", "amended": False}
    assert inbox(two, "editor") == []


def test_an_amended_message_keeps_the_original_in_its_origin(two: Loom) -> None:
    msg = propose(two, "a", "b", "draft words", supervisor="chief")
    assert inbox(two, "editor") == [] and len(inbox(two, "chief")) == 1
    done, node = amend(two, msg.id, "better words")
    assert node.content[0]["text"] == "better words"
    assert node.origin["message"]["original"] == "draft words"
    assert node.origin["message"]["amended"] and done.text == "better words"
    assert node.content_id != two.node("a").content_id


def test_a_rejected_message_never_reaches_the_target(two: Loom) -> None:
    before = two.resolve("b").node
    msg = propose(two, "a", "b", "spam")
    done = reject(two, msg.id, reason="off topic")
    assert done.state == "rejected" and done.reason == "off topic"
    assert two.resolve("b").node == before and inbox(two, "editor") == []
    assert [m.id for m in inbox(two, "editor", state="rejected")] == [msg.id]


def test_a_decision_is_taken_once_and_bad_input_writes_nothing(two: Loom) -> None:
    msg = propose(two, "a", "b", "once")
    approve(two, msg.id)
    head = two.resolve("b").node
    with pytest.raises(InvalidInput, match="approved, not proposed"):
        approve(two, msg.id)
    with pytest.raises(InvalidInput):
        reject(two, msg.id)
    assert two.resolve("b").node == head and message(two, msg.id).state == "approved"
    with pytest.raises(NotFound):
        approve(two, "01ARZ3NDEKTSV4RRFFQ69G5FAV")
    with pytest.raises(NotFound):
        propose(two, "a", "ghost", "x")
    with pytest.raises(InvalidInput):
        propose(two, "a", "b", "  ")
    with pytest.raises(InvalidInput):
        propose(two, "a", "a", "self")
    assert inbox(two, "editor") == []
