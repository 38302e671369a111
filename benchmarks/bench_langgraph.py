"""LangGraph's checkpointers side by side: its SqliteSaver and PostgresSaver, and
loomdb's LoomSaver on both backends, running the same graph in the same run.

The graph is a chat loop (`StateGraph(MessagesState)`, one model node: a fake model
answering each turn with a fresh message). Each saver runs the same conversation of
`--turns` turns (a user message and a reply each; 490-character texts), then `--forks`
forks: a new user message sent on the checkpoint of an earlier turn (turn 10, 20...),
which LangGraph runs from that point. Printed for each saver:

- bytes per turn: what the store grew by over the conversation, over the turns (the
  SQLite file's used pages; the PostgreSQL tables with their indexes and TOAST, live
  rows: measured after VACUUM FULL (with ANALYZE), since LoomSaver rewrites a value once
  its messages are nodes and PostgreSQL keeps the old row version until a vacuum reuses
  its space);
- bytes per fork, likewise over the forks;
- time per turn: one `invoke` (LangGraph's three checkpoints of a turn and its writes),
  the mean over the conversation and the median of its last 100 turns;
- time to load the last state: `graph.get_state` by a saver just opened (nothing
  remembered), median of 3.

Beside them, measured the same way in the same run: loomdb's own append of the same
messages through a session (the floor: bytes and time per turn; the goal is LoomSaver
within 2x of its bytes), and LangGraph's InMemorySaver (nothing on disk, but it
serializes each new channel value, the whole message list at every step, as the
SQLite and PostgreSQL savers do).
Goals: LoomSaver's bytes per turn within 2x of loomdb's own append, its time per turn
no slower than SqliteSaver's.

    python benchmarks/bench_langgraph.py [--turns 1000] [--forks 100] [--pg ADMIN_URL]
"""

from __future__ import annotations

import argparse
import itertools
import sqlite3
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from common import TEXT, clock, fresh_db
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, MessagesState, StateGraph
from rich.console import Console
from rich.table import Table

import loomdb
from loomdb.integrations.langgraph import LoomSaver


def user_text(i: int) -> str:
    return f"question {i}: {TEXT}"


def _replies() -> Iterator[AIMessage]:
    for i in itertools.count():
        yield AIMessage(f"answer {i}: {TEXT}")


def build(saver: Any) -> Any:
    model = GenericFakeChatModel(messages=_replies())

    def chatbot(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("chatbot", chatbot)
    builder.add_edge(START, "chatbot")
    return builder.compile(checkpointer=saver)


@dataclass
class Result:
    bytes_per_turn: float
    bytes_per_fork: float
    turn_mean: float
    turn_late: float
    load: float


def converse(open_saver: Callable[[], AbstractContextManager[Any]],
             size: Callable[[], int], turns: int, forks: int) -> Result:
    """The conversation and its forks through one saver (see the module docstring)."""
    config = {"configurable": {"thread_id": "bench"}}
    times: list[float] = []
    at: list[dict[str, Any]] = []
    with open_saver() as saver:
        graph = build(saver)
        start = size()
        for i in range(turns):
            t0 = clock()
            events = list(graph.stream({"messages": [HumanMessage(user_text(i))]}, config,
                                       stream_mode="checkpoints"))
            times.append(clock() - t0)
            at.append(events[-1]["config"])
        grown = size()
        for f in range(forks):
            turn = at[(f * 10 + 9) % turns]
            graph.invoke({"messages": [HumanMessage(f"fork {f}: {TEXT}")]}, turn)
        forked = size()
    loads = []
    for _ in range(3):
        with open_saver() as saver:
            graph = build(saver)
            t0 = clock()
            state = graph.get_state(at[-1])
            loads.append(clock() - t0)
            assert len(state.values["messages"]) == 2 * turns
    return Result((grown - start) / turns, (forked - grown) / max(forks, 1),
                  statistics.fmean(times), statistics.median(times[-100:]),
                  statistics.median(loads))


def own_append(url: str, size: Callable[[], int], turns: int) -> Result:
    """loomdb's own append of the same messages through a session: the floor."""
    times = []
    with loomdb.open(url) as loom:
        start = size()
        for i in range(turns):
            t0 = clock()
            if i == 0:
                loom.new_tree(user_text(0), session="own")
            else:
                loom.append("own", user_text(i), role="user")
            loom.append("own", f"answer {i}: {TEXT}", role="assistant")
            times.append(clock() - t0)
        grown = size()
    t0 = clock()
    with loomdb.open(url) as loom:
        assert len(loom.context("own")["messages"]) == 2 * turns
    return Result((grown - start) / turns, 0.0, statistics.fmean(times),
                  statistics.median(times[-100:]), clock() - t0)


# -- sizes ------------------------------------------------------------------------------
def sqlite_size(path: Path) -> Callable[[], int]:
    """The used pages of a SQLite file, read through its own connection (the WAL too)."""
    def measure() -> int:
        if not path.exists():
            return 0
        with sqlite3.connect(path) as db:
            pages, free, page = (db.execute(f"PRAGMA {p}").fetchone()[0]
                                 for p in ("page_count", "freelist_count", "page_size"))
        return int((pages - free) * page)
    return measure


def pg_size(url: str) -> Callable[[], int]:
    """The tables of a database with their indexes and TOAST, live rows (VACUUM FULL)."""
    def measure() -> int:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("VACUUM (FULL, ANALYZE)")  # a rewrite loses the planner's statistics
            row = conn.execute(
                "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE c.relkind = 'r' AND n.nspname = 'public'").fetchone()
        return int(row[0]) if row else 0
    return measure


@contextmanager
def postgres_saver(url: str) -> Iterator[PostgresSaver]:
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        yield saver


# -- main -------------------------------------------------------------------------------
def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--forks", type=int, default=100)
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/postgres",
                        help="an admin URL allowed to CREATE DATABASE")
    args = parser.parse_args()
    turns, forks = args.turns, args.forks
    results: dict[str, Result] = {}
    with tempfile.TemporaryDirectory() as tmp, fresh_db(args.pg) as pg_lg, \
            fresh_db(args.pg) as pg_loom, fresh_db(args.pg) as pg_own:
        base = Path(tmp)
        memory = InMemorySaver()
        results["InMemorySaver (in memory)"] = converse(
            lambda: nullcontext(memory), lambda: 0, turns, forks)
        lite = base / "langgraph.db"
        results["SqliteSaver"] = converse(
            lambda: SqliteSaver.from_conn_string(str(lite)), sqlite_size(lite), turns, forks)
        results["LoomSaver, SQLite"] = converse(
            lambda: LoomSaver.from_conn_string(str(base / "loom")),
            sqlite_size(base / "loom" / "loom.db"), turns, forks)
        results["loomdb append, SQLite (floor)"] = own_append(
            str(base / "own"), sqlite_size(base / "own" / "loom.db"), turns)
        results["PostgresSaver"] = converse(
            lambda: postgres_saver(pg_lg), pg_size(pg_lg), turns, forks)
        blobs = f"?blobs=file://{base / 'pgblobs'}"
        results["LoomSaver, PostgreSQL"] = converse(
            lambda: LoomSaver.from_conn_string(pg_loom + blobs), pg_size(pg_loom), turns, forks)
        results["loomdb append, PostgreSQL (floor)"] = own_append(
            pg_own + blobs, pg_size(pg_own), turns)
    report(results, turns, forks)


def report(results: dict[str, Result], turns: int, forks: int) -> None:
    table = Table(title=f"LangGraph checkpointers: a {turns}-turn conversation and {forks} "
                        f"forks, same graph, same run (Python {sys.version.split()[0]})")
    for col in ("saver", "bytes / turn", "bytes / fork", "time / turn (mean)",
                "time / turn (last 100)", "load last state"):
        table.add_column(col, justify="left" if col == "saver" else "right")
    for name, r in results.items():
        table.add_row(name, f"{r.bytes_per_turn:,.0f}" if r.bytes_per_turn else "-",
                      f"{r.bytes_per_fork:,.0f}" if r.bytes_per_fork else "-",
                      f"{r.turn_mean * 1e3:.2f} ms", f"{r.turn_late * 1e3:.2f} ms",
                      f"{r.load * 1e3:.1f} ms")
    console = Console()
    console.print(table)
    for backend, peer in (("SQLite", "SqliteSaver"), ("PostgreSQL", "PostgresSaver")):
        ours, floor = results[f"LoomSaver, {backend}"], results[f"loomdb append, {backend} (floor)"]
        theirs = results[peer]
        console.print(
            f"{backend}: LoomSaver bytes/turn {ours.bytes_per_turn / floor.bytes_per_turn:.2f}x "
            f"loomdb's own append (goal <= 2x), {theirs.bytes_per_turn / ours.bytes_per_turn:.0f}x "
            f"less than {peer}; time/turn {ours.turn_mean / theirs.turn_mean:.2f}x {peer}'s "
            f"(goal <= 1x; last 100 turns {ours.turn_late / theirs.turn_late:.2f}x); load "
            f"{ours.load / theirs.load:.2f}x {peer}'s")


if __name__ == "__main__":
    main()
