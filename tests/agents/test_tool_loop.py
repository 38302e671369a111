"""The tool loop on the real local model (its tool calls constrained by a JSON-schema
grammar): tool_use and tool_result nodes grouped as one turn, approvals that pause and
survive the process, concurrent approvals that run the tool once, denials."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import loomdb
from loomdb import InvalidInput, Loom
from loomdb.agents.approvals import approve, pending, tool_call
from loomdb.agents.config import load_tools
from loomdb.agents.identities import bind_session, set_persona
from loomdb.agents.loop import Env, Plan, prepare_step, run_turn
from tools_file import tools_toml

SRC = str(Path(loomdb.__file__).parent.parent)
TOKENS = 32  # a constrained tool call is about 20 tokens


def cli(store_url: str, *args: str, tools: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    if tools is not None:
        env["LOOMDB_TOOLS"] = str(tools)
    return subprocess.run([sys.executable, "-m", "loomdb", "--db", store_url, *args],
                          capture_output=True, text=True, env=env, timeout=600, check=False)


def test_a_tool_runs_and_every_node_of_the_turn_is_grouped(loom: Loom, tally) -> None:
    _, root = loom.new_tree("Count one visit with the tally tool.", session="s",
                            options=tally.options())
    turn = run_turn(loom, "s", max_steps=2, max_tokens=TOKENS, tools=tally.config)
    call, result = turn.nodes[0], turn.nodes[1]
    [use] = call.content
    assert call.role == "assistant" and use["type"] == "tool_use" and use["name"] == "tally"
    assert use["input"] == {"what": "visit"}
    assert call.provenance["model"] == "SmolLM2-135M-Instruct"
    [res] = result.content
    assert result.role == "tool" and res["tool_use_id"] == use["id"]
    assert res["content"][0]["text"] == "tally: 1" and not res.get("is_error")
    assert all(n.origin["turn"] == root.id for n in turn.nodes)
    assert [n.parent for n in turn.nodes] == [root.id] + [n.id for n in turn.nodes[:-1]]
    assert loom.resolve("s").node == turn.nodes[-1].id
    assert turn.steps <= 2
    runs = sum(1 for n in turn.nodes if n.role == "tool")
    assert tally.runs() == runs >= 1


def test_a_tool_marked_for_approval_pauses_and_resumes_in_another_process(
        loom: Loom, store_url: str, tally) -> None:
    set_persona(loom, "careful", approve=["tally"])
    loom.new_tree("Count one visit.", session="s", options=tally.options())
    bind_session(loom, "s", persona="careful")
    turn = run_turn(loom, "s", max_steps=1, max_tokens=TOKENS, tools=tally.config)
    assert turn.pending == turn.nodes[-1].id and turn.answer is None
    assert tally.runs() == 0 and loom.resolve("s").node == turn.pending
    loom.close()
    listed = json.loads(cli(store_url, "pending", "--json").stdout)["pending"]
    assert [p["node"] for p in listed] == [turn.pending]
    assert listed[0]["calls"][0]["name"] == "tally" and listed[0]["persona"] == "careful"
    done = cli(store_url, "approve", turn.pending, "--json", tools=tally.path)
    assert done.returncode == 0, done.stderr
    assert tally.runs() == 1
    with loomdb.open(store_url) as again:
        result = again.node("s")
        assert result.role == "tool" and result.parent == turn.pending
        assert result.content[0]["content"][0]["text"] == "tally: 1"
        assert tool_call(again, turn.pending).state == "done"
        assert pending(again) == []
    again_done = cli(store_url, "approve", turn.pending, tools=tally.path)
    assert again_done.returncode == 2 and "not pending" in again_done.stderr


def test_concurrent_approvals_of_one_call_run_the_tool_once(loom: Loom, store_url: str,
                                                           tally) -> None:
    set_persona(loom, "careful", approve=["*"])
    loom.new_tree("Count one visit.", session="s", options=tally.options())
    turn = run_turn(loom, "s", max_steps=1, max_tokens=TOKENS, persona="careful",
                    tools=tally.config)
    assert turn.pending is not None
    outcomes: list[str] = []
    start = threading.Barrier(4)

    def approver() -> None:
        with loomdb.open(store_url) as mine:
            start.wait()
            try:
                approve(mine, turn.pending, tools=tally.config)
                outcomes.append("ran")
            except InvalidInput:
                outcomes.append("refused")

    threads = [threading.Thread(target=approver) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["ran", "refused", "refused", "refused"]
    assert tally.runs() == 1
    assert [n.role for n in loom.nodes(loom.children(turn.pending))] == ["tool"]


def test_deny_stores_an_error_result_and_the_tool_never_runs(loom: Loom, store_url: str,
                                                            tally) -> None:
    set_persona(loom, "careful", approve=["tally"])
    loom.new_tree("Count one visit.", session="s", options=tally.options())
    turn = run_turn(loom, "s", max_steps=1, max_tokens=TOKENS, persona="careful",
                    tools=tally.config)
    done = cli(store_url, "deny", turn.pending, "--reason", "not today", "--json",
               tools=tally.path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["stopped"] == "max_steps"
    result = loom.node("s")
    [block] = result.content
    assert block["is_error"] and "not today" in block["content"][0]["text"]
    assert tally.runs() == 0 and tool_call(loom, turn.pending).state == "denied"


def test_a_tool_the_persona_denies_is_never_offered_nor_run(loom: Loom, tally) -> None:
    set_persona(loom, "strict", deny=["tally"])
    _, root = loom.new_tree("Count one visit.", session="s", options=tally.options())
    box, ctx = prepare_step(loom, Plan(root.id, "s", "strict"), root.id,
                            loomdb.agents.identities.get_persona(loom, "strict"),
                            Env(tools=tally.config))
    assert "tools" not in ctx["options"] and box.tools["tally"].key == "tool:tally"
    turn = run_turn(loom, "s", max_steps=1, max_tokens=8, persona="strict", tools=tally.config)
    assert turn.answer is not None and turn.answer.content[0]["type"] == "text"
    assert tally.runs() == 0


def test_a_persona_brings_its_identity_and_params_and_explicit_options_win(
        loom: Loom, tally) -> None:
    set_persona(loom, "p", system="You are terse.", params={"temperature": 0.5, "top_k": 3})
    _, root = loom.new_tree("Hi", session="s", system="Tree rules.",
                            options={"top_k": 9})
    persona = loomdb.agents.identities.get_persona(loom, "p")
    _box, ctx = prepare_step(loom, Plan(root.id, "s", "p", options={"temperature": 0.1}),
                             root.id, persona)
    assert [m["content"][0]["text"] for m in ctx["messages"][:2]] == ["You are terse.",
                                                                       "Tree rules."]
    assert ctx["options"]["temperature"] == 0.1 and ctx["options"]["top_k"] == 9


def test_bad_steps_and_unknown_calls_are_typed_errors(loom: Loom) -> None:
    loom.new_tree("Hi", session="s")
    with pytest.raises(InvalidInput):
        run_turn(loom, "s", max_steps=0)
    with pytest.raises(loomdb.NotFound):
        approve(loom, "s")
    with pytest.raises(loomdb.NotFound):
        run_turn(loom, "s", persona="ghost")


def test_a_turn_under_a_persona_that_denies_everything_starts_no_server(
        loom: Loom, tmp_path: Path) -> None:
    marker = tmp_path / "probe-started"
    probe = Path(__file__).parent.parent / "fixtures" / "tools" / "probe_server.py"
    config = load_tools(tools_toml(tmp_path / "tools.toml", {"servers": {"probe": {
        "command": sys.executable, "args": [str(probe), str(marker)]}}}))
    set_persona(loom, "strict", deny=["*"])
    loom.new_tree("Say hi.", session="s", options={"servers": ["probe"], "seed": 1})
    bind_session(loom, "s", persona="strict")
    turn = run_turn(loom, "s", max_steps=1, max_tokens=8, tools=config)
    assert turn.answer is not None and turn.answer.content[0]["type"] == "text"
    assert not marker.exists()
