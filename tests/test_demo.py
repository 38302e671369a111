"""The demo prints what it says: every message of a context (for the compacted
session, the summary and every kept turn), not the first two."""

from __future__ import annotations

from rich.console import Console

from loomdb import Loom
from loomdb.demo import show_messages


def test_the_demo_prints_every_message_of_a_context(loom: Loom) -> None:
    loom.new_tree("What is a loom?", system="Answer briefly.", session="main")
    for i, role in enumerate(["assistant", "user", "assistant", "user"]):
        loom.append("main", f"turn {i + 1}\nwith a second line", role=role)
    console = Console(record=True, width=120, color_system=None)
    show_messages(console, loom.context("main")["messages"])
    lines = console.export_text().splitlines()
    assert [line.split()[0] for line in lines] == ["system", "user", "assistant", "user",
                                                   "assistant", "user"]
    assert lines[-1].endswith("turn 4 with a second line")
