"""LangGraph's checkpointer on loomdb: the official conformance suite on both backends,
and a real agent graph (a model that calls a tool, LangGraph's own ToolNode) whose
threads and forks `loomdb tree` draws."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import Capability
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

import loomdb
from loomdb.cli import app
from loomdb.integrations.langgraph import AsyncLoomSaver, LoomSaver
from loomdb.integrations.langgraph.refs import ref_name


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_the_official_conformance_suite_passes_every_capability(shared_store: str, kind: str) -> None:
    @checkpointer_test(name=f"{'Async' if kind == 'async' else ''}LoomSaver")
    async def saver() -> AsyncIterator[Any]:
        if kind == "sync":
            with LoomSaver.from_conn_string(shared_store) as s:
                yield s
        else:
            async with AsyncLoomSaver.from_conn_string(shared_store) as s:
                yield s

    report = asyncio.run(validate(saver))
    report.print_report()  # shown with -s: the report of the closing note
    assert {cap.value: (r.detected, r.passed, r.tests_failed, r.failures)
            for cap, r in ((c, report.results[c.value]) for c in Capability)} == {
        cap.value: (True, True, 0, []) for cap in Capability}
    assert report.passed_all_base() and report.passed_all()


# ---------------------------------------------------------------- a real agent graph


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


class ToolCallingFake(GenericFakeChatModel):
    """LangChain's fake chat model, answering from a list; tools bound are accepted (it
    answers the same: the calls are in the scripted replies)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def _replies() -> Iterator[AIMessage]:
    n = 0
    while True:
        n += 1
        yield AIMessage("", tool_calls=[{"name": "add", "args": {"a": n, "b": 2},
                                         "id": f"call-{n}"}],
                        response_metadata={"model_name": "fake"})
        yield AIMessage(f"The sum is {n + 2}.", usage_metadata={
            "input_tokens": 10, "output_tokens": 5, "total_tokens": 15})


def _graph(saver: Any) -> Any:
    model = ToolCallingFake(messages=_replies())

    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([add]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=saver)


def _nodes(shared_store: str, thread: str) -> int:
    with loomdb.open(shared_store) as lm:
        return lm.tree(lm.resolve(ref_name(thread, 0)).tree).nodes


def test_an_agent_graph_runs_on_loomdb_and_loomdb_tree_shows_its_threads_and_forks(
        shared_store: str) -> None:
    config = {"configurable": {"thread_id": "demo"}}
    with LoomSaver.from_conn_string(shared_store) as saver:
        graph = _graph(saver)
        out = graph.invoke({"messages": [HumanMessage("what is 1+2?")]}, config)
        assert [type(m) for m in out["messages"]] == [HumanMessage, AIMessage, ToolMessage,
                                                      AIMessage]
        assert _nodes(shared_store, "demo") == 4  # a step stored only its new messages
        out = graph.invoke({"messages": [HumanMessage("and 2+2?")]}, config)
        assert _nodes(shared_store, "demo") == 8
        history = list(graph.get_state_history(config))
        first_answer = next(s for s in history if len(s.values.get("messages", [])) == 4
                            and s.next == ())
        # a fork: the state of an old checkpoint updated, then run on
        forked = graph.update_state(first_answer.config,
                                    {"messages": [HumanMessage("what is 5+5?")]})
        graph.invoke(None, forked)
        assert _nodes(shared_store, "demo") == 9  # one new message: nothing copied
        graph.invoke({"messages": [HumanMessage("thanks")]}, {"configurable": {"thread_id": "other"}})
        final = graph.get_state(config).values["messages"]

    # read back by another saver (nothing remembered): the same messages, exactly
    with LoomSaver.from_conn_string(shared_store) as saver:
        again = _graph(saver).get_state(config).values["messages"]
    assert again == final and [type(m) for m in again] == [type(m) for m in final]
    assert final[-1].content == "what is 5+5?"
    assert again[1].tool_calls[0]["id"] == "call-1" and again[1].response_metadata == {
        "model_name": "fake"}
    assert again[3].usage_metadata == {"input_tokens": 10, "output_tokens": 5,
                                       "total_tokens": 15}

    runner = CliRunner()
    drawn = runner.invoke(app, ["--db", shared_store, "tree", "lg/demo"])
    assert drawn.exit_code == 0, drawn.output
    for shown in ("what is 1+2?", "[tool_use add]", "[tool_result call-1] 3", "The sum is 3.",
                  "and 2+2?", "The sum is 4.", "what is 5+5?", "session:lg/demo>",
                  "session:lg/demo/fork-1>", "forked from lg/demo"):
        assert shown in drawn.output, (shown, drawn.output)
    listed = runner.invoke(app, ["--db", shared_store, "trees"])
    assert listed.exit_code == 0 and "what is 1+2?" in listed.output and "thanks" in listed.output
    with loomdb.open(shared_store) as lm:
        hits = lm.search("thanks")
        assert [h["entity"] for h in hits] == [lm.resolve("lg/other~3").node]  # its root


def test_messages_are_stored_once_and_forks_share_them(shared_store: str) -> None:
    """Two threads copied, one pruned, one deleted: the tree is shared by the copy, kept
    while a thread uses it, deleted with the last."""
    config = {"configurable": {"thread_id": "a"}}
    with LoomSaver.from_conn_string(shared_store) as saver:
        graph = _graph(saver)
        graph.invoke({"messages": [HumanMessage("what is 1+2?")]}, config)
        saver.copy_thread("a", "b")
        copied = graph.get_state({"configurable": {"thread_id": "b"}}).values["messages"]
        assert copied == graph.get_state(config).values["messages"]
        graph.invoke({"messages": [HumanMessage("and on b?")]}, {"configurable": {"thread_id": "b"}})
        assert _nodes(shared_store, "a") == 8  # b continued in a's tree: 4 shared + 4 new
        saver.prune(["a"])
        assert len(list(saver.list(config))) == 1
        assert len(graph.get_state(config).values["messages"]) == 4
        saver.delete_thread("a")
        assert saver.get_tuple(config) is None
        assert len(graph.get_state({"configurable": {"thread_id": "b"}}).values["messages"]) == 8
        tree = saver.loom.resolve("lg/b").tree
        saver.delete_thread("b")
        assert tree not in [t.id for t in saver.loom.trees()]


def test_subgraph_namespaces_and_weird_thread_ids(shared_store: str) -> None:
    """A subgraph's checkpoints keep their namespace and continue the parent's path; a
    thread id that is no ref name gets a digest name."""
    inner = StateGraph(MessagesState)
    inner.add_node("echo", lambda s: {"messages": [AIMessage(f"echo: {s['messages'][-1].content}")]})
    inner.add_edge(START, "echo")
    outer = StateGraph(MessagesState)
    outer.add_node("sub", inner.compile())
    outer.add_edge(START, "sub")
    config = {"configurable": {"thread_id": "a thread / with spaces"}}
    with LoomSaver.from_conn_string(shared_store) as saver:
        graph = outer.compile(checkpointer=saver)
        graph.invoke({"messages": [HumanMessage("hi")]}, config, subgraphs=True)
        namespaces = {t.config["configurable"]["checkpoint_ns"]
                      for t in saver.list({"configurable": {"thread_id": config["configurable"]["thread_id"]}})}
        assert "" in namespaces and any(ns.startswith("sub:") for ns in namespaces)
        name = ref_name("a thread / with spaces", 0)
        assert name.startswith("lg/t-")
        state = graph.get_state(config).values["messages"]
        assert [m.content for m in state] == ["hi", "echo: hi"]
        tree = saver.loom.tree(saver.loom.resolve(name).tree)
        assert tree.nodes == 2  # the subgraph's copy of "hi" is the same node


def test_a_forgotten_tree_takes_its_checkpoints_and_a_store_copy_carries_them(
        shared_store: str, tmp_path: Path) -> None:
    """The area's rows follow the store: `loomdb delete tree:` forgets the thread's
    checkpoints with its messages; `loomdb migrate` copies them to the other backend."""
    config = {"configurable": {"thread_id": "kept"}}
    with LoomSaver.from_conn_string(shared_store) as saver:
        graph = _graph(saver)
        graph.invoke({"messages": [HumanMessage("what is 1+2?")]}, config)
        graph.invoke({"messages": [HumanMessage("what is 3+4?")]}, {"configurable": {"thread_id": "gone"}})
        state = graph.get_state(config).values["messages"]
        gone = saver.loom.resolve("lg/gone").tree
        saver.loom.forget.delete_tree(gone, force=True)
        assert saver.get_tuple({"configurable": {"thread_id": "gone"}}) is None
    target = str(tmp_path / "copy") if shared_store.startswith("postgres") else None
    if target is None:
        return  # the postgres run copies its store into a SQLite one
    loomdb.copy_store(shared_store, target)
    with LoomSaver.from_conn_string(target) as saver:
        assert _graph(saver).get_state(config).values["messages"] == state


def test_an_async_graph_on_the_async_saver(shared_store: str) -> None:
    config = {"configurable": {"thread_id": "async"}}

    async def run() -> list[BaseMessage]:
        async with AsyncLoomSaver.from_conn_string(shared_store) as saver:
            graph = _graph(saver)
            await graph.ainvoke({"messages": [HumanMessage("what is 1+2?")]}, config)
            state = await graph.aget_state(config)
            history = [s async for s in graph.aget_state_history(config)]
            assert len(history) >= 4
            messages: list[BaseMessage] = state.values["messages"]
            return messages

    messages = asyncio.run(run())
    assert [m.content for m in messages][-1] == "The sum is 3."
    with loomdb.open(shared_store) as lm:
        assert lm.tree(lm.resolve("lg/async").tree).nodes == 4
