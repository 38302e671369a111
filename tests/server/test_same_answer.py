"""The same question gets the same answer on every edge (CLI, HTTP, MCP): the context
a model is sent, and a node's one JSON shape."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import httpx
from mcp import ClientSession

from loomdb import Loom
from loomdb.agents.identities import bind_session, binding, get_persona, set_persona
from loomdb.agents.loop import Plan, prepare_step
from loomdb.agents.subagents import start_child
from loomdb.server.schemas import NodeOut
from mcp_client import SRC, answer, session_with


def cli(store_url: str, *args: str) -> Any:
    done = subprocess.run([sys.executable, "-m", "loomdb", "--db", store_url, *args],
                          capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": SRC}, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def mcp_calls(store_url: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def job(s: ClientSession) -> list[Any]:
        return [answer(await s.call_tool(tool, args)) for tool, args in calls]

    return list(session_with(store_url, job))


def turn_request(lm: Loom, at: str) -> dict[str, Any]:
    """What an agent's turn at `at` sends, built by the turn's own step builder."""
    pos = lm.resolve(at)
    name = binding(lm, pos.session).persona
    plan = Plan("probe", pos.session, name)
    _box, ctx = prepare_step(lm, plan, pos.node, get_persona(lm, name) if name else None)
    return json.loads(json.dumps(ctx))


def test_context_on_every_edge_is_what_a_turn_sends(
        served_store: tuple[str, Loom, str], http: httpx.Client, name: str) -> None:
    url, lm, _base = served_store
    lm.new_tree("Plan the garden.", system="Be brief.", session=name,
                options={"temperature": 0.2})
    lm.append(name, "Beans by the fence.", role="assistant")
    set_persona(lm, f"{name}-gardener", system="You are a careful gardener.",
                params={"top_p": 0.5})
    bind_session(lm, name, persona=f"{name}-gardener")
    _tree, child = start_child(lm, name, "List three beans.", None)
    lm.append(child, "Runner, broad, French.", role="assistant")

    for at in (name, child):
        sent = turn_request(lm, at)
        assert sent["messages"][0]["content"][0]["text"] == "You are a careful gardener."
        if at == child:  # the parent's path leads, read through from the parent tree
            texts = [m["content"][0]["text"] for m in sent["messages"]]
            assert texts[-4:] == ["Plan the garden.", "Beans by the fence.",
                                  "List three beans.", "Runner, broad, French."]
        assert sent["options"]["top_p"] == 0.5
        assert cli(url, "context", at) == sent
        got = http.get(f"/api/nodes/{at}/context")
        assert got.status_code == 200, got.text
        assert got.json() == sent
        assert mcp_calls(url, [("context", {"headish": at})]) == [sent]


def test_a_node_has_one_shape_on_every_edge(
        served_store: tuple[str, Loom, str], http: httpx.Client, name: str) -> None:
    url, lm, _base = served_store
    _tree, root = lm.new_tree("What grows in shade?", session=name)
    node = lm.append(name, "Ferns and hostas.", role="assistant")
    lm.tag(node.id, "garden", "shade")
    lm.bookmark(node.id, f"{name}-ferns")

    from_cli = cli(url, "show", node.id, "--json")
    got = http.get(f"/api/nodes/{node.id}")
    assert got.status_code == 200, got.text
    shown, logged = mcp_calls(url, [("show", {"headish": node.id}), ("log", {"headish": name})])

    assert from_cli["meta"] == {"bookmarked": True, "label": f"{name}-ferns", "pruned": False,
                                "excluded": False, "tags": ["garden", "shade"]}
    assert got.json() == from_cli
    assert shown == from_cli
    assert logged["nodes"][-1] == from_cli
    assert set(NodeOut.model_fields) == set(from_cli)
