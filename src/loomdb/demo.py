"""`python -m loomdb.demo`: grow and branch a conversation, then show what loomdb keeps.

It builds a small conversation, regenerates an answer (siblings), forks a session,
edits an early turn and splices it into a view (the later turns stay attached), and
prints the tree, a context window, the session log and the chain verification.
"""

from __future__ import annotations

import argparse
import json
import shutil

from rich.console import Console
from rich.rule import Rule

from . import open as open_store
from .cli.drawing import draw


def build(loom, console: Console) -> str:  # type: ignore[no-untyped-def]
    tree, root = loom.new_tree(
        "What is a loom, in one sentence?", system="Answer briefly.", session="main",
        title="Looms and loomdb",
    )
    loom.append("main", "A loom is a frame that weaves threads into cloth.", role="assistant",
                author="model-a")
    loom.append(root.id, "A loom holds warp threads taut so the weft can be woven through.",
                role="assistant", author="model-b")
    loom.append("main", "And what is loomdb?")
    loom.append("main", "Git for conversations: every message is an immutable, addressable node.",
                role="assistant", author="model-a")
    loom.fork("main", "curious")
    loom.append("curious", "How does it store edits?")
    loom.append("curious", "As new versions of a node; what follows stays attached.",
                role="assistant", author="model-a")
    edited = loom.edit(root.id, "What is a loom? Explain it to a child.")
    loom.view("splice", "main")
    loom.select("splice", edited.id)
    return tree.id


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", default=".loomdb-demo", help="store folder (recreated)")
    args = parser.parse_args(argv)
    shutil.rmtree(args.db, ignore_errors=True)
    console = Console(highlight=False)
    with open_store(args.db) as loom:
        tree = build(loom, console)
        console.print(Rule("the tree: two answers to the first question, a fork, an edit"))
        console.print(draw(loom, tree))
        console.print(Rule("context at the view 'splice': the edited turn 1, the original rest"))
        console.print_json(json.dumps(loom.context("splice")))
        console.print(Rule("session log of 'main'"))
        for move in loom.ref_log("main"):
            console.print(f"{move.at}  {move.old or '-'} -> {move.new}  ({move.reason})")
        report = loom.verify(tree)
        console.print(Rule("hash chain"))
        console.print(f"verify: {'ok' if report.ok else 'BROKEN'}, {report.checked} nodes checked")
        console.print(f"\nThe store is in {args.db}/ ; try: loomdb --db {args.db} tree {tree}")


if __name__ == "__main__":
    main()
