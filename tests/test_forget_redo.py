"""A compaction summary made from messages whose spans were redacted is stale
(`verify` lists it) until `loomdb compact --redo` compacts again at the same place:
the new summary is made from what the messages hold now, and nothing is stale. The
model is a real OpenAI-compatible server on loopback that summarizes in a few words,
quoting the booking code when it was sent one; both backends."""

from __future__ import annotations

from typing import Any

from loomdb import Loom
from loomdb.compaction import compact
from loomdb.front import Runtime
from loomdb.providers.config import parse_config
from loopback_json import json_server

CODE = "heron-5512-lisbon-code"
TURNS = [
    "I am Ada. We go to Lisbon in May with two kids, for five days in Alfama.",
    f"Lovely. Your booking code is {CODE}; take tram 28 and see the Oceanarium.",
    "Our budget is 1500 euros without flights. Is that enough for us?",
    "Yes, 1500 euros is comfortable for five days for a family of three.",
    "What should we do on the first day?",
]


def _model(path: str, headers: Any, asked: Any) -> tuple[int, Any]:
    said = " ".join(m["content"] if isinstance(m["content"], str) else
                    "".join(p.get("text", "") for p in m["content"]) for m in asked["messages"])
    text = f"Ada, Lisbon, code {CODE if CODE in said else 'withheld'}."
    return 200, {"id": "c1", "object": "chat.completion", "created": 0, "model": "m",
                 "choices": [{"index": 0, "finish_reason": "stop", "message": {
                     "role": "assistant", "content": text}}],
                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def test_a_stale_summary_is_made_again(loom: Loom) -> None:
    loom.new_tree(TURNS[0], session="main")
    for i, text in enumerate(TURNS[1:], start=1):
        loom.append("main", text, role="assistant" if i % 2 else "user")
    with json_server(_model) as port:
        config = parse_config({"models": {"stub": {
            "provider": "openai", "model": "m", "api_key_env": "LOOMDB_TEST_KEY",
            "max_retries": 0, "base_url": f"http://127.0.0.1:{port}/v1", "timeout": 5}}})
        environ = {"LOOMDB_TEST_KEY": "k"}
        first = compact(loom, "main", keep=1, model="stub", config=config, environ=environ)
        assert CODE in str(first.content)
        done = loom.forget.redact_spans(text=CODE, dry_run=False)
        assert [s["item"] for s in done.stale] == [first.id] and first.id in done.ids
        report = loom.verify()
        assert report.ok and [s["item"] for s in report.stale] == [first.id]
        me = loom.as_(loom.operator, runtime=Runtime(config=config).with_environ(environ))
        redone = me.forget.redo_compactions(model="stub")
    assert [(r["stale"], r["tree"]) for r in redone] == [(first.id, first.tree)]
    again = loom.node(redone[0]["node"])
    assert again.kind == "compaction" and again.parent == first.parent
    assert "code withheld" in str(again.content)
    assert loom.verify().stale == [] and loom.forget.stale() == []
