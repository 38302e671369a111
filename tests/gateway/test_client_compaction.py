"""A client's own compaction (pi sends its summary, then the turns it kept, then what is
new): recorded as a compaction node on the same path, as an import of pi's session file
records it, not as a new tree storing the kept turns again. Answers are real local-model
output (test_record.py's fixture)."""

from __future__ import annotations

from typing import Any

from test_record import answer  # noqa: F401 - the shared answer fixture

from loomdb import Loom
from loomdb.exchanges import openai_chat
from loomdb.exchanges.exchange import Gateway
from loomdb.providers.base import Completion

SYSTEM = {"role": "system", "content": "You are a coding agent."}
SUMMARY = ("The conversation history before this point was compacted into the following "
           "summary:\n\n<summary>\nThe user asked two questions.\n</summary>")


def said(reply: Completion) -> dict[str, Any]:
    return {"role": "assistant", "content": reply.text}


def test_summary_and_kept_turns_make_a_compaction_node_on_the_same_path(
        loom: Loom, answer: Completion) -> None:  # noqa: F811
    gw = Gateway(loom)

    def ask(messages: list[dict[str, Any]]) -> Any:
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
