"""Models benchmark: request building at depth, token counting, parallel alternatives.

- the provider request at depth 10k (normalized context + request builder) beside the
  normalized context alone: the builder's overhead ratio;
- token counting throughput (loomdb.tokens beside raw tiktoken on the same text);
- `generate -n 4` with the local model beside 4 sequential single calls.

    python benchmarks/bench_models.py [--quick]
"""

from __future__ import annotations

import argparse
import tempfile

from common import median_time
from rich.console import Console
from rich.table import Table

import loomdb
from loomdb.generation import generate
from loomdb.providers.requests import completion_prompt, openai_chat_request
from loomdb.providers.requests_anthropic import anthropic_request
from loomdb.tokens import count_text, encoding

TEXT = ("A loom holds the warp threads taut so the weft can be woven through them; "
        "every pass of the shuttle adds one row of cloth. ") * 4




def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    depth = 2000 if args.quick else 10_000
    table = Table(title="loomdb models benchmark (medians)")
    for col in ("measure", "loomdb", "baseline", "ratio"):
        table.add_column(col, justify="left" if col == "measure" else "right")
    with tempfile.TemporaryDirectory() as tmp:
        loom = loomdb.open(tmp)
        loom.new_tree("q", session="deep", options={"model": "gpt-4o-mini"})
        with loom.backend.transaction():
            for i in range(depth):
                loom.append("deep", f"{i} {TEXT}", role="assistant" if i % 2 else "user")
        head = loom.resolve("deep").node
        base = median_time(lambda: loom.context(head), 7)
        for name, build in (
            ("openai chat", lambda c: openai_chat_request(c)),
            ("anthropic messages", lambda c: anthropic_request(c, model="claude-sonnet-4-5")),
            ("completion prompt", lambda c: completion_prompt(c)),
        ):
            t = median_time(lambda b=build: b(loom.context(head)), 7)
            table.add_row(f"context + {name} request, depth {depth}", f"{t * 1e3:.1f} ms",
                          f"{base * 1e3:.1f} ms (context alone)", f"{t / base:.2f}x")

        corpus = [f"{i} {TEXT}" for i in range(5000)]
        enc = encoding()
        total = sum(count_text(t) for t in corpus)
        ours = median_time(lambda: [count_text(t) for t in corpus], 5)
        raw = median_time(lambda: [len(enc.encode_ordinary(t)) for t in corpus], 5)
        table.add_row(f"count tokens, {len(corpus)} messages ({total} tokens)",
                      f"{total / ours / 1e6:.2f} M tok/s", f"{total / raw / 1e6:.2f} M tok/s (tiktoken)",
                      f"{ours / raw:.2f}x time")

        loom.new_tree("Name four fruits.", session="gen")
        generate(loom, "gen", max_tokens=4)  # load the model once
        n4 = median_time(lambda: generate(loom, "gen~1", n=4, max_tokens=32), 3)
        seq = median_time(lambda: [generate(loom, "gen~1", n=1, max_tokens=32) for _ in range(4)], 3)
        table.add_row("generate -n 4, local model, 32 tokens", f"{n4:.2f} s", f"{seq:.2f} s (4 calls)",
                      f"{n4 / seq:.2f}x")
        loom.close()
    Console(width=140).print(table)


if __name__ == "__main__":
    main()
