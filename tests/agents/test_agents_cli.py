"""The agent commands' contract (in process): JSON shapes, bindings, messages, and bad
input as exit 2 with nothing written."""

from __future__ import annotations

import json

from test_bad_input import run_cli


def ok(db: str, *args: str) -> dict:
    code, out, err = run_cli(db, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def fails(db: str, *args: str) -> str:
    code, out, err = run_cli(db, *args, "--json")
    assert code == 2 and "error" in json.loads(out), (code, out)
    return err


def test_agents_personas_and_session_bindings(store_url: str) -> None:
    db = store_url
    shown = ok(db, "persona", "set", "helper", "--system", "You help.", "--model", "local",
               "--param", "temperature=0", "--param", "stop=END", "--allow", "a",
               "--allow", "b", "--deny", "b", "--approve", "a")
    assert shown == ok(db, "persona", "show", "helper") == {
        "name": "helper", "system": "You help.", "model": "local",
        "params": {"temperature": 0, "stop": "END"}, "allow": ["a", "b"], "deny": ["b"],
        "approve": ["a"]}
    assert ok(db, "agent", "add", "ann", "--kind", "human", "--persona", "helper")["name"] == "ann"
    assert [a["name"] for a in ok(db, "agent", "list")["agents"]] == ["ann"]
    ok(db, "new", "--text", "hello", "--session", "s")
    bound = ok(db, "session", "set", "s", "--persona", "helper", "--agent", "ann")
    assert (bound["persona"], bound["agent"]) == ("helper", "ann")
    assert ok(db, "route", "--persona", "helper")["headish"] == "s"
    assert ok(db, "pending") == {"pending": []}
    assert "persona" in fails(db, "session", "set", "s", "--persona", "ghost")
    fails(db, "agent", "add", "bob", "--kind", "robot")
    fails(db, "persona", "set", "p", "--param", "novalue")
    fails(db, "route", "--session", "s", "--smart", "x")
    assert [a["name"] for a in ok(db, "agent", "list")["agents"]] == ["ann"]


def test_messages_through_the_cli(store_url: str) -> None:
    db = store_url
    ok(db, "new", "--text", "a", "--session", "a")
    ok(db, "new", "--text", "b", "--session", "b")
    first = ok(db, "propose", "a", "b", "--text", "hi b", "--supervisor", "sue")
    second = ok(db, "propose", "a", "b", "--text", "draft", "--supervisor", "sue")
    third = ok(db, "propose", "a", "b", "--text", "spam", "--supervisor", "sue")
    assert [m["id"] for m in ok(db, "inbox", "sue")["messages"]] == [
        first["id"], second["id"], third["id"]]
    landed = ok(db, "approve", first["id"])
    assert landed["message"]["state"] == "approved"
    amended = ok(db, "amend", second["id"], "--text", "final")
    assert ok(db, "reject", third["id"], "--reason", "no")["state"] == "rejected"
    log = ok(db, "log", "b")["nodes"]
    assert [n["content"][0]["text"] for n in log] == ["b", "hi b", "final"]
    assert log[-1]["id"] == amended["node"] and log[-1]["origin"]["message"]["original"] == "draft"
    assert ok(db, "inbox", "sue") == {"messages": []}
    assert "not proposed" in fails(db, "reject", third["id"])
