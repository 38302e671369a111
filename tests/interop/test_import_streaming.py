"""Large and broken files: memory stays bounded, and a cut file keeps what came before."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from interop_fixtures import cg_branched, cg_conversation, cg_message

from loomdb.errors import InvalidInput
from loomdb.interop import parse_file

SRC = Path(__file__).resolve().parents[2] / "src"
TARGET_BYTES = 25_000_000


def write_big_chatgpt(path: Path, target: int) -> tuple[int, int]:
    """A ChatGPT export of ~`target` bytes, written conversation by conversation."""
    text = "lorem ipsum dolor sit amet " * 40
    count = size = 0
    with path.open("w") as out:
        out.write("[")
        while size < target:
            nodes: list[tuple[str, str | None, dict[str, Any] | None]] = [("root", None, None)]
            for j in range(40):
                parent = nodes[-1][0]
                nodes.append(
                    (
                        f"m{j}",
                        parent,
                        cg_message(
                            f"m{j}",
                            "user" if j % 2 == 0 else "assistant",
                            [text],
                            create_time=1.7e9 + j,
                        ),
                    )
                )
            chunk = ("," if count else "") + json.dumps(
                cg_conversation(nodes, conv_id=f"c{count}", current_node="m39")
            )
            out.write(chunk)
            size += len(chunk)
            count += 1
        out.write("]")
    return count, path.stat().st_size


MEASURE = textwrap.dedent(
    """
    import json, resource, sys, time, tracemalloc
    from loomdb.interop import parse_file
    list(parse_file(sys.argv[2]))  # warm up: imports and first allocations
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    convs = messages = 0
    for conv in parse_file(sys.argv[1]):
        convs += 1
        messages += len(conv.messages)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()  # a second, traced pass: the Python heap's own high-water mark
    for conv in parse_file(sys.argv[1]):
        pass
    traced = tracemalloc.get_traced_memory()[1]
    print(json.dumps({"convs": convs, "messages": messages, "seconds": seconds,
                      "base_kb": base, "peak_kb": peak, "traced_peak": traced}))
    """
)


class TestLargeFiles:
    @pytest.mark.slow
    def test_a_25mb_export_parses_in_memory_that_does_not_grow_with_it(self, tmp_path: Path) -> None:
        big = tmp_path / "conversations.json"
        count, size = write_big_chatgpt(big, TARGET_BYTES)
        small = tmp_path / "small.json"
        small.write_text(json.dumps([cg_branched()]))
        result = subprocess.run(
            [sys.executable, "-c", MEASURE, str(big), str(small)],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
            env={**os.environ, "PYTHONPATH": str(SRC)},
        )
        stats = json.loads(result.stdout)
        grown = (stats["peak_kb"] - stats["base_kb"]) * 1024
        print(
            f"\n{size / 1e6:.0f} MB, {stats['convs']} conversations, {stats['messages']} messages: "
            f"{stats['seconds']:.1f} s, peak RSS grew {grown / 1e6:.1f} MB (base {stats['base_kb'] / 1024:.0f} MB), "
            f"traced heap peak {stats['traced_peak'] / 1e6:.1f} MB"
        )
        assert stats["convs"] == count and stats["messages"] == 40 * count
        assert grown < size / 10  # well below the file size
        assert stats["traced_peak"] < size / 10
        assert stats["seconds"] < 60


class TestTruncatedFiles:
    def test_a_cut_array_yields_every_complete_conversation_then_names_the_place(
        self, tmp_path: Path
    ) -> None:
        convs = [cg_branched(f"c{i}") for i in range(5)]
        text = json.dumps(convs)
        cut = text.index('"conversation_id": "c3"')
        path = tmp_path / "cut.json"
        path.write_text(text[:cut])
        seen: list[str] = []
        with pytest.raises(InvalidInput) as info:
            for conv in parse_file(path):
                seen.append(conv.source_id)  # type: ignore[union-attr]
        assert seen == ["c0", "c1", "c2"]
        assert (
            "conversation index 3" in info.value.why and "3 conversation(s) read" in info.value.why
        )
        offset = int(info.value.where.rsplit("byte ", 1)[1])
        assert 0 < offset <= cut

    def test_garbage_in_the_middle_stops_with_invalid_input_after_the_good_ones(
        self, tmp_path: Path
    ) -> None:
        good = json.dumps(cg_branched("ok"))
        path = tmp_path / "bad.json"
        path.write_text(f"[{good}, {{oops}}, {good}]")
        seen = []
        with pytest.raises(InvalidInput, match="malformed"):
            for conv in parse_file(path, "chatgpt"):
                seen.append(conv)
        assert len(seen) == 1
