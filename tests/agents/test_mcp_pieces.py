"""Prompt pieces over MCP, driven by the official SDK's stdio client on both backends:
add (twice: the second adds nothing), list, log, show, a thread from a template whose
context holds the pieces, used-by; an unknown piece is a one-line tool error."""

from __future__ import annotations

import json
from typing import Any

from mcp import ClientSession

from loomdb import Loom
from mcp_client import answer, session_with


def test_pieces_over_mcp(loom: Loom, store_url: str) -> None:
    loom.close()

    async def job(s: ClientSession) -> dict[str, Any]:
        async def call(tool: str, **args: Any) -> Any:
            return answer(await s.call_tool(tool, args))

        out: dict[str, Any] = {}
        out["add"] = [await call("piece_add", name="facts", text="Looms hold warp threads.")
                      for _ in range(2)]
        await call("piece_add", name="t", template=True,
                   text=json.dumps({"pieces": ["facts"], "system": "Be brief."}))
        out["list"] = await call("piece_list")
        out["log"] = await call("piece_log", name="facts")
        out["show"] = await call("piece_show", spec="facts@1")
        out["new"] = await call("new_thread", text="what is a loom?", template="t",
                                session="main")
        out["context"] = await call("context", headish="main")
        out["used"] = await call("piece_used_by", name="facts")
        bad = await s.call_tool("new_thread", {"text": "x", "system_piece": "ghost"})
        out["bad"] = (bad.is_error, bad.content[0].text)
        return out

    out = session_with(store_url, job)
    assert [a["added"] for a in out["add"]] == [True, False]
    assert {p["name"]: p["kind"] for p in out["list"]["pieces"]} == {"facts": "piece",
                                                                    "t": "template"}
    assert [v["version"] for v in out["log"]["versions"]] == [1]
    assert out["show"]["text"] == "Looms hold warp threads."
    assert [[b["text"] for b in m["content"]] for m in out["context"]["messages"]] == [
        ["Be brief."], ["Looms hold warp threads.", "what is a loom?"]]
    assert out["used"]["used_by"] == [{"tree": out["new"]["tree"], "node": out["new"]["node"]}]
    assert out["bad"][0] and "names no piece 'ghost'" in out["bad"][1]
