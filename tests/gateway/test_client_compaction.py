"""A client's own compaction (pi sends its summary, then the turns it kept, then what is
new; Claude Code its summary merged with what is new): recorded as a compaction node on
the same path, as an import of the client's session file records it, not as a new tree
storing the kept turns again. Every request goes to a new `Gateway` over the store, as
after a restart: nothing of it may rest on a gateway's memory. Answers are real
local-model output (test_record.py's fixture)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from test_record import answer  # noqa: F401 - the shared answer fixture

from loomdb import Loom
from loomdb.exchanges import anthropic_messages, openai_chat
from loomdb.exchanges.exchange import Gateway
from loomdb.providers.base import Completion

#: a request of the real Claude Code 2.1 (its system prompt, tools, first message)
CLAUDE_CODE = Path(__file__).parents[1] / "fixtures" / "wires" / "anthropic-messages"

SYSTEM = {"role": "system", "content": "You are a coding agent."}
SUMMARY = ("The conversation history before this point was compacted into the following "
           "summary:\n\n<summary>\nThe user asked two questions.\n</summary>")


def said(reply: Completion) -> dict[str, Any]:
    return {"role": "assistant", "content": reply.text}


def test_summary_and_kept_turns_make_a_compaction_node_on_the_same_path(
        loom: Loom, answer: Completion) -> None:  # noqa: F811
    def ask(messages: list[dict[str, Any]]) -> Any:
        gw = Gateway(loom)  # a gateway started anew for every request
        ex = openai_chat.parse(gw, {"model": "local", "messages": messages})
        return ex, gw.record(ex, [answer], None)

    history: list[dict[str, Any]] = [SYSTEM]
    for turn in range(3):
        history.append({"role": "user", "content": f"question {turn}"})
        ex, rec = ask(history)
        history.append(said(answer))
    tree, leaf = rec.tree, ex.ids[0]
    before = loom.tree(tree).nodes
    kept = history[-2:]  # the client keeps its last turn
    compacted = [SYSTEM, {"role": "user", "content": SUMMARY}, *kept,
                 {"role": "user", "content": "question 3"}]
    ex, rec = ask(compacted)
    assert rec.tree == tree and len(loom.trees()) == 1
    assert loom.tree(tree).nodes == before + 3  # the compaction, the question, the answer
    path = loom.nodes(loom.path(ex.ids[0]))
    compaction = path[-3]
    assert compaction.kind == "compaction" and compaction.parent == leaf
    assert compaction.content == [{"type": "text", "text": SUMMARY}]
    kept_ids = set(loom.path(leaf)[-2:])
    assert {s[0] if isinstance(s, (tuple, list)) else s for s in compaction.sources
            } >= kept_ids  # the turns it kept: its hyperedge sources
    context = loom.context(ex.ids[0])["messages"]
    assert [m["role"] for m in context][-5:] == ["user", "user", "assistant", "user",
                                                 "assistant"]
    assert context[-4]["content"][0]["text"] == "question 2"  # a kept turn, not copied
    # the client's next request sends the same summary and kept turns: it continues
    again = [*compacted, said(answer), {"role": "user", "content": "question 4"}]
    ex2, rec2 = ask(again)
    assert rec2.written == 1 and loom.path(ex2.ids[0])[:-2] == loom.path(ex.ids[0])
    # a request that no answer of this gateway ends is matched as before: a branch
    # after the shared system message, no compaction
    ex3, _ = ask([SYSTEM, {"role": "user", "content": SUMMARY},
                  {"role": "user", "content": "unrelated"}])
    path3 = loom.nodes(loom.path(ex3.ids[0]))
    assert [n.kind for n in path3] == ["message"] * 4 and path3[0].id == path[0].id


@pytest.mark.parametrize("summarizer", ["same prompt", "own prompt"])
def test_claude_codes_compact_is_a_compaction_node_after_the_conversation(
        loom: Loom, answer: Completion, summarizer: str) -> None:  # noqa: F811
    """Claude Code's `/compact`: it asks the model for a summary of the conversation
    (its whole history, then its ask; under its own system prompt or a summarizer's),
    then starts over with one user message holding "This session is being continued...
    Summary: <the summary>" followed by what it merged into the same message
    (reminders, the next prompt). The gateway writes the compaction node after the
    conversation's last answer, the rest after it."""
    given = json.loads((CLAUDE_CODE / "request.json").read_text(encoding="utf-8"))
    first = given["messages"][0]  # Claude Code's reminders and its prompt, one message

    def ask(messages: list[dict[str, Any]], reply: Completion = answer,
            system: Any = given["system"]) -> Any:
        gw = Gateway(loom)  # a gateway started anew for every request
        body = {**given, "model": "local", "messages": messages, "stream": False,
                "system": system}
        ex = anthropic_messages.parse(gw, body)
        return ex, gw.record(ex, [reply], None)

    def said(reply: Completion) -> dict[str, Any]:
        return {"role": "assistant", "content": [{"type": "text", "text": reply.text}]}

    history: list[dict[str, Any]] = [first]
    ex, rec = ask(history)
    history += [said(answer), {"role": "user", "content": "And now?"}]
    ex, rec = ask(history)
    leaf, tree = ex.ids[0], rec.tree
    history.append(said(answer))
    inner = "1. Primary Request and Intent:\n   The user said hello, then asked what next."
    summary = replace(answer, content=[{"type": "text", "text": (
        f"<analysis>\nTwo turns.\n</analysis>\n\n<summary>\n{inner}\n</summary>")}])
    own = "You are a helpful AI assistant tasked with summarizing conversations."
    ask([*history, {"role": "user", "content": "Your task is to create a detailed summary "
                                               "of the conversation so far."}], summary,
        given["system"] if summarizer == "same prompt" else own)
    nodes, trees = loom.tree(tree).nodes, len(loom.trees())
    continued = {"role": "user", "content": [
        {"type": "text", "text": "This session is being continued from a previous "
         "conversation that ran out of context. The summary below covers the earlier "
         f"portion of the conversation.\n\nSummary:\n{inner}\n\nPlease continue."},
        *first["content"][:2], {"type": "text", "text": "What next?"}]}
    ex, rec = ask([continued])
    assert rec.tree == tree and len(loom.trees()) == trees == (
        1 if summarizer == "same prompt" else 2)  # the summarizer's run: a tree apart
    assert loom.tree(tree).nodes == nodes + 3  # the compaction, the rest, the answer
    path = loom.nodes(loom.path(ex.ids[0]))
    compaction, rest = path[-3], path[-2]
    assert compaction.kind == "compaction" and compaction.parent == leaf
    assert compaction.content == continued["content"][:1]
    assert rest.kind == "message" and rest.content == continued["content"][1:]
    # the next request sends the same message again: it goes on from there
    again = [continued, said(answer), {"role": "user", "content": "Thanks."}]
    ex2, rec2 = ask(again)
    assert rec2.written == 1 and loom.path(ex2.ids[0])[:-2] == loom.path(ex.ids[0])
