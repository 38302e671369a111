"""The agents' inbox over HTTP, both backends, a live server whose turns may run the
`tally` tool: a call the local model wrote waits, is listed, approved (the tool runs
once, the turn resumes) or denied (it never runs); a turn's steps read as written;
proposed messages approved, amended or denied; personas with their rules."""

from __future__ import annotations

import httpx
import pytest
from agent_calls import PERSONA, Tally, pause, tally_world
from live import must

from loomdb import Loom

pytestmark = [pytest.mark.xdist_group("local-model"), pytest.mark.slow]


world = tally_world("agents")


@pytest.fixture
def served(world: tuple[str, Loom, str, Tally]) -> tuple[Loom, str]:
    return world[1], world[2]


@pytest.fixture
def tally(world: tuple[str, Loom, str, Tally]) -> Tally:
    return world[3]


def test_a_waiting_call_is_listed_then_approved_and_its_turn_resumes(
        served: tuple[Loom, str], http: httpx.Client, tally: Tally, name: str) -> None:
    lm = served[0]
    node = pause(lm, tally, name)
    listed = must(http.get("/api/agents/pending"))["pending"]
    [mine] = [p for p in listed if p["node"] == node]
    assert mine["session"] == name and mine["persona"] == PERSONA and mine["state"] == "pending"
    assert [c["name"] for c in mine["calls"]] == ["tally"]
    assert mine["calls"][0]["input"] == {"what": "visit"}
    waiting = must(http.get(f"/api/agents/turns/{node}"))
    assert waiting["state"] == "pending" and waiting["stamp"] == node
    assert [s["id"] for s in waiting["steps"]] == [node]
    assert waiting["steps"][0]["content"][0]["type"] == "tool_use"
    before = tally.runs()

    done = must(http.post(f"/api/agents/pending/{node}/approve"))
    assert tally.runs() == before + 1
    assert done["stopped"] == "max_steps" and done["session"] == name
    [result] = done["nodes"]
    assert lm.node(result).parent == node and lm.resolve(name).node == result
    read = must(http.get(f"/api/agents/turns/{name}"))
    assert [s["id"] for s in read["steps"]] == [node, result]
    assert read["steps"][1]["role"] == "tool" and read["stamp"] == result
    assert read["state"] == "open" and read["turn"] == waiting["turn"]
    assert node not in [p["node"] for p in must(http.get("/api/agents/pending"))["pending"]]
    again = http.post(f"/api/agents/pending/{node}/approve")
    assert again.status_code == 400 and "not pending" in again.json()["error"]["message"]
    assert tally.runs() == before + 1


def test_a_denied_call_never_runs_and_the_model_reads_why(
        served: tuple[Loom, str], http: httpx.Client, tally: Tally, name: str) -> None:
    lm = served[0]
    node = pause(lm, tally, name)
    before = tally.runs()
    done = must(http.post(f"/api/agents/pending/{node}/deny", json={"reason": "not today"}))
    assert tally.runs() == before
    [result] = done["nodes"]
    [block] = lm.node(result).content
    assert block["is_error"] and "denied: not today" in block["content"][0]["text"]
    assert must(http.get(f"/api/agents/turns/{node}"))["state"] == "open"
    too_long = http.post(f"/api/agents/pending/{node}/deny", json={"reason": "x" * 2001})
    assert too_long.status_code == 422


def test_unknown_calls_and_turns_are_404_and_bad_bodies_422(http: httpx.Client) -> None:
    assert http.post("/api/agents/pending/nowhere/approve").status_code == 404
    assert http.post("/api/agents/pending/nowhere/deny").status_code == 404
    assert http.get("/api/agents/turns/nowhere").status_code == 404
    assert http.post("/api/agents/messages/nothing/approve").status_code == 404
    assert http.post("/api/agents/messages/nothing/amend", json={}).status_code == 422
    assert http.post("/api/agents/messages/x/deny", json={"why": "typo"}).status_code == 422


def test_a_message_node_that_is_no_turn_reads_as_an_empty_turn(
        served: tuple[Loom, str], http: httpx.Client, name: str) -> None:
    served[0].new_tree("just a question", session=name)
    got = must(http.get(f"/api/agents/turns/{name}"))
    assert got == {"turn": None, "steps": [], "state": "answer", "stamp": None}


def test_proposed_messages_are_approved_amended_or_denied(
        served: tuple[Loom, str], http: httpx.Client, name: str) -> None:
    lm = served[0]
    source, target = f"{name}-from", f"{name}-to"
    lm.new_tree("I gather facts.", session=source)
    lm.new_tree("I write reports.", session=target)
    door = lm.agents
    plain = door.propose(source, target, "Facts: the sky is blue.", supervisor=name)
    amended = door.propose(source, target, "Facts: teh grass is green.", supervisor=name)
    refused = door.propose(source, target, "Buy my product.", supervisor=name)
    listed = must(http.get("/api/agents/messages", params={"supervisor": name}))["messages"]
    assert [m["id"] for m in listed] == [plain.id, amended.id, refused.id]
    assert listed[0]["from_session"] == source and listed[0]["to_session"] == target
    every = [m["id"] for m in must(http.get("/api/agents/messages"))["messages"]]
    assert {plain.id, amended.id, refused.id} <= set(every)

    one = must(http.post(f"/api/agents/messages/{plain.id}/approve"))
    assert one["message"]["state"] == "approved"
    assert lm.node(one["node"]).content[0]["text"] == "Facts: the sky is blue."
    two = must(http.post(f"/api/agents/messages/{amended.id}/amend",
                         json={"text": "Facts: the grass is green."}))
    assert two["message"]["original"] == "Facts: teh grass is green."
    node = lm.node(two["node"])
    assert node.content[0]["text"] == "Facts: the grass is green."
    assert node.origin["message"]["amended"] is True and lm.resolve(target).node == node.id
    three = must(http.post(f"/api/agents/messages/{refused.id}/deny", json={"reason": "spam"}))
    assert three["message"]["state"] == "rejected" and three["message"]["reason"] == "spam"
    assert lm.resolve(target).node == node.id
    assert must(http.get("/api/agents/messages", params={"supervisor": name}))["messages"] == []
    twice = http.post(f"/api/agents/messages/{refused.id}/approve")
    assert twice.status_code == 400 and "not proposed" in twice.json()["error"]["message"]


def test_personas_are_listed_with_their_rules(
        served: tuple[Loom, str], http: httpx.Client, name: str) -> None:
    served[0].agents.set_persona(name, system="Be brief.", allow=["tally", "search"],
                                 deny=["shell"], approve=["tally"])
    listed = must(http.get("/api/agents/personas"))["personas"]
    [mine] = [p for p in listed if p["name"] == name]
    assert mine == {"name": name, "system": "Be brief.", "model": None, "params": {},
                    "allow": ["tally", "search"], "deny": ["shell"], "approve": ["tally"]}
    assert must(http.get(f"/api/agents/personas/{name}")) == mine
    assert http.get("/api/agents/personas/nobody-by-that-name").status_code == 404


def test_an_amended_call_runs_with_the_persons_input_and_the_thread_shows_it(
        served: tuple[Loom, str], http: httpx.Client, tally: Tally, name: str) -> None:
    lm = served[0]
    node = pause(lm, tally, name)
    [use] = lm.node(node).content
    before = tally.runs()
    for body in ({"inputs": {}}, {"inputs": {"not-a-call": {"what": "x"}}},
                 {"inputs": {use["id"]: "text"}}):
        r = http.post(f"/api/agents/pending/{node}/amend", json=body)
        assert r.status_code in (400, 422), r.text
    unstorable = '{"inputs": {"' + use["id"] + '": {"what": "\\ud800"}}}'  # a lone surrogate
    r = http.post(f"/api/agents/pending/{node}/amend", content=unstorable,
                  headers={"Content-Type": "application/json"})
    assert r.status_code == 400, r.text
    assert tally.runs() == before and [p.node for p in lm.agents.pending()].count(node) == 1
    assert lm.versions(node) == [node]  # the refused amendments wrote nothing
    done = must(http.post(f"/api/agents/pending/{node}/amend",
                          json={"inputs": {use["id"]: {"what": "amended visit"}}}))
    assert tally.runs() == before + 1
    assert '"amended visit"' in tally.file.read_text().splitlines()[-1]
    [result] = done["nodes"]
    version = lm.node(lm.node(result).parent)
    assert version.edited_from == node and version.content[0]["input"] == {"what": "amended visit"}
    assert version.content[0]["id"] == use["id"] and lm.node(node).content == [use]
    assert [b["input"] for m in lm.context(name)["messages"] for b in m["content"]
            if b["type"] == "tool_use"] == [{"what": "amended visit"}]
    read = must(http.get(f"/api/agents/turns/{name}"))
    assert [s["id"] for s in read["steps"]] == [version.id, result]
    assert [s["amended"] for s in read["steps"]] == [True, False]
    again = http.post(f"/api/agents/pending/{node}/amend",
                      json={"inputs": {use["id"]: {"what": "again"}}})
    assert again.status_code == 400 and tally.runs() == before + 1
