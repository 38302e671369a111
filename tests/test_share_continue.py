"""Continuing a shared branch (`Shares.fork`): a link made with `allow_continue` gives a
signed-in reader a tree of their own whose context starts with the shared path, nothing
copied; a link without it is refused; revoking leaves forks made; the maker sees the
count and never the fork; the path's blobs are the fork's to read."""

from __future__ import annotations

import json
from typing import Any

import pytest

from loomdb import Loom
from loomdb.errors import InvalidInput, NotFound
from loomdb.front import Runtime
from loomdb.providers.config import parse_config
from loomdb.users import Owner, add_user
from loopback_json import json_server

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 16


def texts(ctx: dict) -> list[str]:  # type: ignore[type-arg]
    return ["".join(b.get("text", "") for b in m["content"]) for m in ctx["messages"]]


def test_a_reader_continues_a_shared_path(loom: Loom) -> None:
    maker_user, _ = add_user(loom, "maker")
    reader_user, _ = add_user(loom, "reader")
    maker, reader = loom.as_(Owner(loom, maker_user)), loom.as_(Owner(loom, reader_user))
    tree, _ = maker.trees.new("what is a loom?", session="m", system="be brief")
    ref = loom.put_blob(PNG, "image/png")
    picture = loom.append("m", [{"type": "text", "text": "a frame"},
                                       {"type": "image", "ref": ref, "mime_type": "image/png"}],
                          role="assistant")
    maker.nodes.append(tree.root, "the branch beside", role="assistant")
    _, read_only = maker.shares.create("m", live=True)
    with pytest.raises(InvalidInput, match="read-only"):
        reader.shares.fork(read_only, "r", "and then?")
    made, token = maker.shares.create("m", live=True, allow_continue=True)
    assert reader.shares.open(token).info()["allow_continue"] is True
    assert reader.shares.open(read_only).thread()["share"]["allow_continue"] is False
    before = len(loom.tree_nodes(tree.id))

    fork, root = reader.shares.fork(token, "r", "and then?")
    assert fork.id != tree.id and fork.lineage == {"shared": {
        "tree": tree.id, "node": picture.id, "share": made.id}}
    assert len(loom.tree_nodes(tree.id)) == before and len(loom.tree_nodes(fork.id)) == 1
    ctx = reader.nodes.context("r")
    assert texts(ctx) == ["be brief", "what is a loom?", "a frame", "and then?"]
    assert "the branch beside" not in json.dumps(ctx)
    assert reader.shares.fork_blob("r", picture.id, ref) == (PNG, "image/png")
    with pytest.raises(NotFound):  # a message off the path names nothing
        reader.shares.fork_blob("r", tree.root, ref)

    # the maker: the count, never the fork
    assert [s.forks for s in maker.shares.list() if s.id == made.id] == [1]
    for call in (lambda: maker.nodes.context("r"), lambda: maker.nodes.get(root.id),
                 lambda: maker.shares.fork_blob(root.id, picture.id, ref)):
        with pytest.raises(NotFound):
            call()

    # revoked: no new fork, the one made keeps exactly the path it forked from
    maker.nodes.append("m", "after the fork", role="assistant")
    maker.shares.revoke(token)
    with pytest.raises(NotFound):
        reader.shares.fork(token, "r2", "again")
    assert texts(reader.nodes.context("r")) == texts(ctx)
    assert reader.shares.fork_blob("r", picture.id, ref) == (PNG, "image/png")
    reader.nodes.append("r", "an answer", role="assistant")
    assert texts(reader.nodes.context("r"))[-2:] == ["and then?", "an answer"]


def test_the_operator_continues_and_bad_input_says_what(loom: Loom) -> None:
    loom.new_tree("hi", session="main")
    _, token = loom.shares.create("main", allow_continue=True)
    with pytest.raises(InvalidInput, match="--text"):
        loom.shares.fork(token, "mine", "  ")
    loom.shares.fork(token, "mine", "hello again")
    assert texts(loom.as_(loom.operator).nodes.context("mine")) == ["hi", "hello again"]
    with pytest.raises(InvalidInput):  # the session name is taken
        loom.shares.fork(token, "mine", "once more")
    with pytest.raises(NotFound):
        loom.shares.fork("not-a-token", "other", "x")
    # the MCP tool is the same door call
    from loomdb.mcp.tools_branches import branch_tools

    tool = branch_tools(lambda: loom.as_(loom.operator))["share_continue"]
    out = tool.fn(token=token, session="by-mcp", text="over MCP")
    assert out["session"] == "by-mcp" and loom.tree(out["tree"]).lineage["shared"]["share"]


def test_forgetting_either_end_takes_the_grant(loom: Loom) -> None:
    from loomdb.shares import SHARES

    me = loom.as_(loom.operator)
    shared, _ = loom.new_tree("shared words", session="main")
    _, token = loom.shares.create("main", allow_continue=True)
    first, _ = loom.shares.fork(token, "one", "first fork")
    second, _ = loom.shares.fork(token, "two", "second fork")
    assert [s.forks for s in loom.shares.list()] == [2]
    me.forget.delete_tree(first.id, force=True)
    assert [s.forks for s in loom.shares.list()] == [1]
    me.forget.delete_tree(shared.id, force=True)
    assert texts(me.nodes.context("two")) == ["second fork"]
    with loom.unit(SHARES) as db:
        assert db.one("SELECT count(*) FROM share_forks WHERE tree_id IN (?, ?)",
                      (first.id, second.id)) == (0,)


def _model(path: str, headers: Any, asked: Any) -> tuple[int, Any]:
    """An OpenAI-compatible model answering with every text it was sent, joined."""
    said = [m["content"] if isinstance(m["content"], str) else
            "".join(p.get("text", "") for p in m["content"]) for m in asked["messages"]]
    return 200, {"id": "c1", "object": "chat.completion", "created": 0, "model": "m",
                 "choices": [{"index": 0, "finish_reason": "stop", "message": {
                     "role": "assistant", "content": " | ".join(said)}}],
                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def test_a_fork_is_answered_with_the_shared_path(loom: Loom) -> None:
    loom.new_tree("the shared question", session="main")
    loom.append("main", "the shared answer", role="assistant")
    _, token = loom.shares.create("main", allow_continue=True)
    loom.shares.fork(token, "mine", "my follow-up")
    with json_server(_model) as port:
        config = parse_config({"models": {"stub": {
            "provider": "openai", "model": "m", "api_key_env": "LOOMDB_TEST_KEY",
            "max_retries": 0, "base_url": f"http://127.0.0.1:{port}/v1", "timeout": 5}}})
        me = loom.as_(loom.operator,
                      runtime=Runtime(config=config).with_environ({"LOOMDB_TEST_KEY": "k"}))
        done = me.nodes.generate("mine", models=["stub"])
    assert texts({"messages": [{"content": done.nodes[0].content}]}) == [
        "the shared question | the shared answer | my follow-up"]
