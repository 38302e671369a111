"""loomdb as an agent's memory over MCP, driven by the official SDK's stdio client on
both backends: documents, collections, links and backlinks, bookmarks and tags, edit,
search through the search area, pending approvals, document resources; and every
error answered through the one error mapper (`loomdb.edge`)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from loomdb import Loom, edge, errors
from loomdb.agents.loop import Plan, hold
from loomdb.mcp.answers import resource, tool
from mcp_client import answer, session_with
from test_edge import CASES


async def _call(s: ClientSession, tool_name: str, /, **args: Any) -> Any:
    return answer(await s.call_tool(tool_name, args))


async def _fails(s: ClientSession, tool_name: str, /, **args: Any) -> Any:
    return answer(await s.call_tool(tool_name, args), error=True)


def test_an_agent_keeps_documents_collections_links_and_tags(loom: Loom,
                                                              store_url: str) -> None:
    tree, root = loom.new_tree("The heron nests in reeds.", session="main")
    answer = loom.append("main", "Herons eat fish and frogs.", role="assistant")
    call = loom.append("main", [{"type": "tool_use", "id": "call_1", "name": "shell",
                                 "input": {"cmd": "ls"}}], role="assistant")
    hold(loom, Plan("turn-1", "main", None), call, [dict(call.content[0])])
    loom.close()

    async def job(s: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["new"] = await _call(s, "doc_new", name="notes", text="Herons\n", message="start")
        out["commit"] = await _call(s, "doc_commit", name="notes", text="Herons\nfish\n",
                                    message="diet")
        out["show"] = await _call(s, "doc_show", spec="notes")
        out["show_old"] = await _call(s, "doc_show", spec=f"notes@{out['new']['revision']}")
        out["log"] = await _call(s, "doc_log", name="notes")
        out["diff"] = await _call(s, "doc_diff", name="notes", rev1=out["new"]["revision"],
                                  rev2=out["commit"]["revision"])
        out["coll"] = await _call(s, "coll_new", name="birds", kind="tagged")
        out["item"] = await _call(s, "coll_add", name="birds", entity=answer.id,
                                  tags=["wader"], fields={"diet": "fish"})
        out["coll_show"] = await _call(s, "coll_show", name="birds", tag="wader")
        out["link"] = await _call(s, "link", source="doc:notes", target=answer.id,
                                  type="cites")
        out["backlinks"] = await _call(s, "backlinks", entity=answer.id)
        out["bookmark"] = await _call(s, "bookmark", headish=answer.id, label="diet")
        out["tag"] = await _call(s, "tag", headish=answer.id, tags=["birds"])
        out["node"] = await _call(s, "show", headish="diet")
        out["edit"] = await _call(s, "edit", headish=root.id, text="The heron nests in trees.")
        out["search"] = await _call(s, "search", query="frogs", kind="message")
        out["search_doc"] = await _call(s, "search", query="fish", kind="document")
        out["search_none"] = await _call(s, "search", query="frogs", role="user")
        out["pending"] = await _call(s, "pending")
        read = await s.read_resource("loomdb://documents")
        out["docs_res"] = json.loads(read.contents[0].text)
        read = await s.read_resource("loomdb://document/notes")
        out["doc_res"] = json.loads(read.contents[0].text)
        return out

    out = session_with(store_url, job)
    assert out["show"] == {"document": "notes", "revision": out["commit"]["revision"],
                           "text": "Herons\nfish\n"}
    assert out["show_old"]["text"] == "Herons\n"
    assert [r["message"] for r in out["log"]["revisions"]] == ["diet", "start"]
    assert "+fish" in out["diff"]["diff"]
    assert out["coll"] == {"collection": "birds", "kind": "tagged"}
    [item] = out["coll_show"]["items"]
    assert item["id"] == out["item"]["item"] and item["fields"] == {"diet": "fish"}
    assert out["link"]["type"] == "cites"
    assert {(b["from"], b["type"]) for b in out["backlinks"]["links"]} >= {("doc:notes", "cites")}
    assert out["bookmark"]["node"] == answer.id
    assert out["tag"]["tags"] == ["birds"]
    assert out["node"]["id"] == answer.id and out["node"]["meta"]["label"] == "diet"
    assert [h["entity"] for h in out["search"]["hits"]] == [answer.id]
    assert [h["kind"] for h in out["search_doc"]["hits"]] == ["document"]
    assert out["search_none"]["hits"] == []
    [pending] = out["pending"]["pending"]
    assert pending["node"] == call.id and pending["calls"][0]["name"] == "shell"
    assert [d["document"] for d in out["docs_res"]] == ["notes"]
    assert out["doc_res"] == out["show"]
    import loomdb

    with loomdb.open(store_url) as again:
        edited = again.node(out["edit"]["node"])
        assert edited.edited_from == root.id and edited.tree == tree.id
        assert again.node("main").id == call.id  # the edit moved no session


def test_errors_over_stdio_carry_the_mappers_code(loom: Loom, store_url: str) -> None:
    loom.new_tree("A quiet pond.", session="main")
    loom.close()

    async def job(s: ClientSession) -> dict[str, Any]:
        out = {"ghost": await _fails(s, "show", headish="ghost"),
               "words": await _fails(s, "search", query="!!"),
               "doc": await _fails(s, "doc_show", spec="nothing"),
               "kind": await _fails(s, "coll_new", name="x", kind="heap")}
        try:
            await s.read_resource("loomdb://session/ghost")
        except MCPError as exc:
            out["resource"] = (exc.code, exc.data)
        return out

    out = session_with(store_url, job)
    assert (out["ghost"]["code"], out["ghost"]["data"]["type"]) == (-32004, "NotFound")
    assert (out["words"]["code"], out["words"]["data"]["type"]) == (-32602, "InvalidInput")
    assert out["doc"]["code"] == -32004
    assert out["kind"]["code"] == -32602
    assert out["resource"][0] == -32004 and out["resource"][1]["type"] == "NotFound"


#: MCP's table, pinned (the codes of `CASES` in test_edge), and a bug
TABLE = [(exc, code) for exc, _name, _status, code in CASES]
TABLE.append((RuntimeError("secret internals"), -32603))


@pytest.mark.parametrize(("exc", "code"), TABLE, ids=[type(e).__name__ for e, _ in TABLE])
def test_every_error_class_answers_its_mcp_code(exc: BaseException, code: int) -> None:
    def fails() -> None:
        raise exc

    failed = tool(fails)()
    assert failed.is_error
    text = failed.content[0].text
    found = json.loads(text)
    assert found == edge.mcp_error(exc) == failed.structured_content and found["code"] == code
    with pytest.raises(MCPError) as read:
        resource(fails)()
    assert (read.value.code, read.value.data) == (code, found["data"])
    if not isinstance(exc, errors.LoomError):
        assert "secret" not in text + str(read.value)
