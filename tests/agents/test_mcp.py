"""loomdb as an MCP server, driven by the official SDK's own stdio client on both
backends; and MCP servers (loomdb's own) as a tool source in the tool loop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp import ClientSession

import loomdb
from loomdb import Loom
from loomdb.agents.config import load_tools
from loomdb.agents.identities import bind_session, set_persona
from loomdb.agents.loop import run_turn
from mcp_client import SRC, answer, server, session_with
from tools_file import tools_toml

TOOLS = {"search", "context", "append", "fork", "log", "tree", "generate", "spawn", "delete",
         "redact", "redact_spans", "forgotten", "show", "edit", "bookmark", "tag", "doc_new", "doc_commit",
         "doc_show", "doc_log", "doc_diff", "coll_new", "coll_add", "coll_show", "link",
         "backlinks", "pending", "diff", "merge", "replay", "fork_fresh", "share_continue",
         "piece_add", "piece_list", "piece_log", "piece_show", "piece_used_by", "new_thread"}



def test_an_mcp_client_uses_the_store_as_memory(loom: Loom, store_url: str) -> None:
    tree, root = loom.new_tree("The heron is a wading bird.", session="main")
    loom.close()

    async def job(s: ClientSession) -> dict[str, Any]:
        async def call(tool: str, **args: Any) -> Any:
            return answer(await s.call_tool(tool, args))

        # listed before the first call (the server's own answer) and after it (the SDK's)
        listed = (await s.list_tools()).tools
        out: dict[str, Any] = {"tools": {t.name for t in listed}}
        out["append"] = await call("append", headish="main", text="Herons eat fish.")
        out["fork"] = await call("fork", headish="main", name="side")
        out["log"] = await call("log", headish="side")
        out["tree"] = await call("tree", tree=tree.id)
        out["context"] = await call("context", headish="main")
        out["search"] = await call("search", query="heron fish")
        out["generate"] = await call("generate", headish="side", max_steps=1, max_tokens=6)
        out["spawn"] = await call("spawn", headish="main", task="Say ok.", max_steps=1,
                                  max_tokens=4)
        # the git verbs: a diff, a merge (twice: the second writes nothing), a replay
        # without a model, a tail-fork
        added = out["append"]["node"]
        out["diff"] = await call("diff", left=added, right="side")
        await call("fork", headish=added, name="line")
        out["merge"] = [await call("merge", branch="side", into="line", text="noted")
                        for _ in range(2)]
        out["replay"] = await call("replay", path="side", session="again", generate=False)
        out["fresh"] = await call("fork_fresh", headish="side", name="fresh")
        bad = await s.call_tool("append", {"headish": "ghost", "text": "x"})
        out["bad"] = (bad.is_error, bad.content[0].text)
        assert bad.structured_content == json.loads(bad.content[0].text)
        out["resources"] = {r.uri for r in (await s.list_resources()).resources}
        out["templates"] = {t.uri_template for t in
                            (await s.list_resource_templates()).resource_templates}
        read = await s.read_resource(f"loomdb://tree/{tree.id}")
        out["tree_res"] = json.loads(read.contents[0].text)
        read = await s.read_resource("loomdb://session/main")
        out["session_res"] = json.loads(read.contents[0].text)
        out["listed_again"] = (await s.list_tools()).tools == listed
        return out

    out = session_with(store_url, job)
    assert out["tools"] == TOOLS and out["listed_again"]
    added = out["append"]["node"]
    assert out["fork"] == {"name": "side", "node": added, "tree": tree.id}
    assert [n["content"][0]["text"] for n in out["log"]["nodes"]] == [
        "The heron is a wading bird.", "Herons eat fish."]
    assert out["tree"]["id"] == tree.id and {"name": "main", "node": added} in out["tree"]["sessions"]
    assert out["context"]["messages"][-1]["content"][0]["text"] == "Herons eat fish."
    assert [h["entity"] for h in out["search"]["hits"]] == [added]
    assert out["generate"]["stopped"] == "answer" and out["generate"]["text"] is not None
    assert out["spawn"]["summary_node"] and out["spawn"]["tree"] != tree.id
    assert [e["status"] for e in out["diff"]["entries"]] == ["added"]
    assert out["diff"]["ancestor"] == added
    first, second = out["merge"]
    assert first["created"] and not second["created"] and first["node"] == second["node"]
    assert first["merged_from"]["ref"] == "side" and first["merged_from"]["carries"] == "text"
    assert [t["answers"] for t in out["replay"]["turns"]] == [[]]  # "Herons eat fish."
    assert out["replay"]["onto"] == root.id and out["replay"]["stopped"] is None
    assert out["fresh"]["continued"]["tree"] == tree.id and out["fresh"]["tree"] != tree.id
    assert out["bad"][0] and "unknown headish" in out["bad"][1]
    assert json.loads(out["bad"][1])["data"]["type"] == "NotFound"
    assert out["resources"] == {"loomdb://trees", "loomdb://sessions", "loomdb://documents"}
    assert out["templates"] == {"loomdb://tree/{tree}", "loomdb://session/{name}",
                                "loomdb://document/{name}"}
    assert out["tree_res"]["root"] == root.id
    assert [n["id"] for n in out["session_res"]["nodes"]][-1] == out["spawn"]["summary_node"]
    with loomdb.open(store_url) as again:
        assert again.node("side").parent == added and again.node("side").role == "assistant"
        assert again.node("main").id == out["spawn"]["summary_node"]


def test_the_tool_loop_calls_the_tools_of_an_mcp_server(loom: Loom, store_url: str,
                                                        tmp_path: Path) -> None:
    spec = server(store_url)
    config = load_tools(tools_toml(tmp_path / "tools.toml", {"servers": {"loom": {
        "command": spec["command"], "args": spec["args"], "env": {"PYTHONPATH": SRC}}}}))
    loom.new_tree("Show the log of session main.", session="main", options={
        "servers": ["loom"], "tool_choice": {"name": "log"}, "seed": 3, "temperature": 0})
    # the server offers a whole memory; this agent may use its log only (every tool's
    # definition would not fit the local model's 2,048-token window)
    set_persona(loom, "reader", allow=["mcp:loom/log"])
    bind_session(loom, "main", persona="reader")
    turn = run_turn(loom, "main", max_steps=1, max_tokens=40, tools=config)
    call, result = turn.nodes
    assert call.content[0]["type"] == "tool_use" and call.content[0]["name"] == "log"
    [block] = result.content
    assert block["tool_use_id"] == call.content[0]["id"]
    text = block["content"][0]["text"]
    if block.get("is_error"):  # the model chose a headish that does not exist
        assert json.loads(text)["data"]["type"] == "NotFound"
    else:
        assert "Show the log of session main." in text


def test_forget_tools(loom: Loom, store_url: str) -> None:
    """Redact, delete (refused without force, as a tool error), the record."""
    tree, root = loom.new_tree("mcp q0", session="main")
    a1 = loom.append("main", "mcp-secret", role="assistant")
    loom.close()

    async def job(s: ClientSession) -> dict[str, Any]:
        async def call(tool: str, **args: Any) -> Any:
            return answer(await s.call_tool(tool, args))

        out: dict[str, Any] = {"redact": await call("redact", headish=a1.id, reason="pii")}
        out["context"] = await call("context", headish="main")
        refused = await s.call_tool("delete", {"address": a1.id})
        out["refused"] = (refused.is_error, refused.content[0].text)
        out["delete"] = await call("delete", address=a1.id, force=True)
        out["forgotten"] = await call("forgotten", tree=tree.id)
        return out

    out = session_with(store_url, job)
    assert out["redact"]["ids"] == [a1.id]
    assert out["context"]["messages"][-1]["content"][0]["text"] == "[redacted]"
    assert out["refused"][0] and "--force" in out["refused"][1]
    assert out["delete"]["ids"] == [a1.id] and out["delete"]["refs"] == ["main"]
    assert [e["action"] for e in out["forgotten"]["lines"]] == ["delete", "redact"]


def test_span_redaction_and_the_trash_over_mcp(loom: Loom, store_url: str) -> None:
    """`redact_spans` is a dry run unless told; `delete tree:ID` goes to the trash."""
    tree, _ = loom.new_tree("mcp key walrus-7781-copied", session="main")
    loom.append("main", "it was walrus-7781-copied", role="assistant")
    other, _ = loom.new_tree("another tree", session="other")
    loom.close()

    async def job(s: ClientSession) -> dict[str, Any]:
        async def call(tool: str, **args: Any) -> Any:
            return answer(await s.call_tool(tool, args))

        out: dict[str, Any] = {"dry": await call("redact_spans", text="walrus-7781-copied")}
        out["done"] = await call("redact_spans", text="walrus-7781-copied", dry_run=False)
        out["context"] = await call("context", headish="main")
        out["trash"] = await call("delete", address=f"tree:{other.id}")
        return out

    out = session_with(store_url, job)
    assert out["dry"]["dry_run"] and out["dry"]["trees"][tree.id]["nodes"] == 2
    assert not out["done"]["dry_run"] and len(out["done"]["ids"]) == 2
    texts = [m["content"][0]["text"] for m in out["context"]["messages"]]
    assert texts == ["mcp key [redacted:text]", "it was [redacted:text]"]
    assert out["trash"]["id"] == other.id and out["trash"]["purge_after"]
    with loomdb.open(store_url) as lm:
        assert [t["id"] for t in lm.forget.trash()] == [other.id]
        assert lm.verify().ok
