"""`python -m loomdb.demo`: grow and branch a conversation with a real local model.

Runs offline on the embedded default: SmolLM2-135M-Instruct in-process (no key, no
network). It asks a question, generates two alternative answers (siblings), continues
the first, forks a session from an earlier turn and continues there, splices an edited
first question into a view (the later turns stay attached), compacts the main thread,
and prints the tree, a context window, the session log and the chain verification.
"""

from __future__ import annotations

import argparse
import shutil
from typing import Any

from rich.console import Console
from rich.rule import Rule

from .api import Loom
from .api import open as open_store
from .cli.drawing import draw

MAX_TOKENS = 48


def build(loom: Loom, console: Console) -> str:
    def say(text: str) -> None:
        console.print(f"[bold]user:[/bold] {text}")

    def answer(at: str, n: int = 1) -> None:
        result = loom.generate(at, n=n, max_tokens=MAX_TOKENS)
        for i, node in enumerate(result.nodes):
            mark = " (kept on the session)" if i == 0 and n > 1 else ""
            console.print(f"[cyan]{node.author}{mark}:[/cyan] {node.content[0]['text'].strip()}")

    say("What is a loom?")
    tree, _ = loom.new_tree("What is a loom?", system="Answer in one short sentence.",
                            session="main", title="Looms and loomdb")
    answer("main", n=2)
    say("And what is a thread?")
    loom.append("main", "And what is a thread?")
    answer("main")
    console.print("[dim]fork 'curious' at the first answer, and ask something else there[/dim]")
    loom.fork("main~2", "curious")
    say("Who invented the loom?")
    loom.append("curious", "Who invented the loom?")
    answer("curious")
    console.print("[dim]a view 'spliced' with an edited first question; later turns stay[/dim]")
    loom.view("spliced", "main")
    loom.edit("spliced~3", "What is a loom? Explain it to a child.")
    console.print("[dim]compact 'main', keeping the last 2 turns[/dim]")
    loom.compact("main", keep=2, max_tokens=MAX_TOKENS)
    return tree.id


def show_messages(console: Console, messages: list[dict[str, Any]]) -> None:
    """Every message of a context, a line each: its role and the start of its text."""
    for m in messages:
        text = " ".join("".join(b.get("text", "") for b in m["content"]).split())
        console.print(f"[bold]{m['role']:>9}[/bold]  {text[:100]}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", default=".loomdb-demo", help="store folder (recreated)")
    args = parser.parse_args(argv)
    shutil.rmtree(args.db, ignore_errors=True)
    console = Console(highlight=False)
    with open_store(args.db) as loom:
        console.print(Rule("a conversation with the local model (offline)"))
        tree = build(loom, console)
        console.print(Rule("the tree: two answers, a fork, an edited version, a compaction"))
        console.print(draw(loom.tree_view(tree)))
        console.print(Rule("context at the view 'spliced': the edited question, the original rest"))
        show_messages(console, loom.context("spliced")["messages"])
        console.print(Rule("context at 'main' after compaction (summary + kept turns)"))
        show_messages(console, loom.context("main")["messages"])
        console.print(Rule("session log of 'main'"))
        for move in loom.ref_log("main"):
            old = move.old[-8:] if move.old else "-"
            console.print(f"{move.seq:>2} {move.at}  {old:>8} -> {(move.new or '-')[-8:]}  {move.reason}")
        report = loom.verify(tree)
        console.print(Rule("hash chain"))
        console.print(f"verify: {'ok' if report.ok else 'BROKEN'}, {report.checked} nodes checked")
        console.print(f"\nThe store is in {args.db}/ — try: loomdb --db {args.db} tree {tree}"
                      f"   or: loomdb --db {args.db} chat main")


if __name__ == "__main__":
    main()
