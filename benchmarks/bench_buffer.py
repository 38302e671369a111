"""Buffer-mode benchmark: render a 2,000-node document with authorship spans (a tenth
of the nodes edited, so diffed) beside plain concatenation of the same path, and edit
node 10 of the 2,000-node path to show the store grows by exactly one node.

    python benchmarks/bench_buffer.py [--nodes N] [--runs R] [--db PATH|URL] [--wall]

Times are CPU time of this process (`time.process_time`), as in bench_core.py: on a
shared machine wall time mostly measures the neighbours. `--wall` switches to wall time.

Plain concatenation is `buffer.text`: the one-query path walk, one JSON parse of the
bodies, the texts joined, plus the draft. Authorship is `buffer.document`: the same
walk, the path's nodes (authors), the originals of edited slots, and one character
diff per edited node. Nodes are immutable, so authors and diffs are cached per process:
"cold" empties both caches before each run, "warm" keeps them.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time

import common
from common import median_time
from rich.console import Console
from rich.table import Table

import loomdb
from loomdb import buffer as B
from loomdb.buffer import document as BD

WORDS = ("the loom weaves threads into cloth while the shuttle runs across the warp and "
         "every pick of weft makes one more row of the story").split()


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))) + ". "


def cold_caches() -> None:
    """Forget the diffs and the node authors `buffer.document` keeps between calls."""
    BD._diff.cache_clear()
    BD._WHO.clear()


def build(loom: loomdb.Loom, nodes: int, rng: random.Random) -> None:
    """A buffer document alternating human drafts and model continuations."""
    loom.new_tree(sentence(rng), mode="buffer", session="doc")
    for i in range(1, nodes):
        model = i % 2 == 1
        loom.append("doc", sentence(rng), role="assistant" if model else "user",
                    source="agent" if model else "human", author="local" if model else None)


def edit_a_tenth(loom: loomdb.Loom, nodes: int, rng: random.Random) -> None:
    """Edit every tenth node (through the session, so it selects the versions): replace
    three characters of its second word, as a human fixing a model's sentence would."""
    doc = B.document(loom, "doc")
    for k in range(5, nodes, 10):  # "NEW" replaces 3 characters: no offset moves
        p = doc.nodes[k]
        at = p.start + doc.text[p.start:p.end].index(" ") + 1  # the second word
        B.edit_span(loom, "doc", at, at + 3, "NEW")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--db", default=None, help="store folder or URL (default: a temp folder)")
    parser.add_argument("--wall", action="store_true", help="wall time instead of CPU time")
    args = parser.parse_args()
    common.clock = time.perf_counter if args.wall else time.process_time
    rng = random.Random(7)
    console = Console(width=120)
    with tempfile.TemporaryDirectory() as tmp:
        with loomdb.open(args.db or tmp) as loom:
            t0 = time.perf_counter()
            build(loom, args.nodes, rng)
            edit_a_tenth(loom, args.nodes, rng)
            B.set_draft(loom, "doc", "and the draft at the end")
            console.print(f"[dim]built {args.nodes} nodes, edited a tenth, in "
                          f"{time.perf_counter() - t0:.1f}s[/dim]")
            doc = B.document(loom, "doc")
            edited = sum(1 for p in doc.nodes if p.edited_from)
            assert doc.text == B.text(loom, "doc")

            plain = median_time(lambda: B.text(loom, "doc"), args.runs)
            cold = median_time(lambda: B.document(loom, "doc"), args.runs, cold_caches)
            warm = median_time(lambda: B.document(loom, "doc"), args.runs)

            table = Table(title=f"buffer mode, {args.nodes}-node document ({edited} edited, "
                                f"{len(doc.text):,} chars, {len(doc.spans)} spans) — medians, "
                                f"{'wall' if args.wall else 'CPU'} time, {loom.backend.url.split(':')[0]}, Python {sys.version.split()[0]}")
            for col in ("operation", "time", "ratio vs plain"):
                table.add_column(col, justify="left" if col == "operation" else "right")
            table.add_row("plain concatenation (buffer.text)", f"{plain * 1e3:.2f} ms", "1.0x")
            table.add_row("authorship spans, cold caches", f"{cold * 1e3:.2f} ms",
                          f"{cold / plain:.1f}x")
            table.add_row("authorship spans, warm caches", f"{warm * 1e3:.2f} ms",
                          f"{warm / plain:.1f}x")

            tree = loom.ref("doc").tree
            before = loom.tree(tree).nodes
            piece = doc.nodes[10]
            downstream = loom.path("doc")[11:]
            t0 = common.clock()
            [version] = B.edit_span(loom, "doc", piece.start, piece.start + 3, "EDIT")
            took = common.clock() - t0
            after = loom.tree(tree).nodes
            assert loom.path("doc")[11:] == downstream and loom.path("doc")[10] == version.id
            table.add_row(f"edit node 10 of {args.nodes} (edit_span)", f"{took * 1e3:.2f} ms", "-")
            table.add_row("stored nodes before / after that edit", f"{before} / {after}",
                          f"+{after - before}")
            console.print(table)
            assert after == before + 1


if __name__ == "__main__":
    main()
