"""A synthetic corpus of coding-agent sessions, in the shapes the real formats have
(Claude Code and Codex transcripts as loomdb imports them): a user's request, then
rounds of an assistant's text with a tool call (`tool_use`: Bash, Read, Grep, Edit with
their real input fields) and the tool's result (`tool_result`, role `tool`): source
files, test logs, grep listings, diffs, many kilobytes long, with the odd error.

Seeded and deterministic: `sessions(seed)` yields the same sessions each time. Words
come from an English vocabulary and a vocabulary of identifiers made of syllables
(Zipf-distributed, so a few are everywhere and most are rare), so full-text queries
have common and rare words alike, as in real code.

    python benchmarks/agent_corpus.py --sessions 3   # print a few sessions as JSON
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
from collections.abc import Iterator
from typing import Any

_SYL = ["ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "zi", "pa", "do", "gu", "re", "ta",
        "bi", "fe", "xo", "qu", "ly", "ch"]
ENGLISH = ("the a of to and in is it for that with this on as be by are from at not or "
           "build test fails passes error fix change file function module import return "
           "value type check run command output line missing expected found call cache "
           "config path read write parse request response server client timeout retry "
           "memory index query session branch commit merge review refactor rename "
           "install version dependency warning deprecated assert raise exception handle "
           "loop list dict string number null empty first last next before after").split()
_ERRORS = ["TypeError", "KeyError", "ValueError", "AssertionError", "ImportError",
           "TimeoutError", "PermissionError", "FileNotFoundError", "RuntimeError"]
_TOOLS = ("Bash", "Read", "Grep", "Edit")


class Corpus:
    def __init__(self, seed: int = 7, identifiers: int = 20000) -> None:
        rng = random.Random(seed)
        self.names = sorted({"".join(rng.choice(_SYL) for _ in range(rng.randint(2, 4)))
                             for _ in range(identifiers)})
        rng.shuffle(self.names)
        self.cum = list(itertools.accumulate(1 / (i + 1) for i in range(len(self.names))))
        self.seed = seed

    def ident(self, rng: random.Random, k: int = 1) -> list[str]:
        return rng.choices(self.names, cum_weights=self.cum, k=k)

    def prose(self, rng: random.Random, words: int) -> str:
        out = []
        for _ in range(words):
            out.append(rng.choice(ENGLISH) if rng.random() < 0.75 else self.ident(rng)[0])
        return " ".join(out).capitalize() + "."

    def code(self, rng: random.Random, lines: int) -> str:
        out: list[str] = []
        while len(out) < lines:
            fn, *args = self.ident(rng, rng.randint(1, 4))
            out.append(f"def {fn}({', '.join(args)}):")
            out.append(f'    """{self.prose(rng, rng.randint(5, 14))}"""')
            for _ in range(rng.randint(2, 9)):
                a, b, c = self.ident(rng, 3)
                out.append(rng.choice([
                    f"    {a} = {b}.{c}({', '.join(args[:2])})",
                    f"    if {a} is None:\n        raise {rng.choice(_ERRORS)}('{b} {c}')",
                    f"    for {a} in {b}:\n        {c}.append({a})",
                    f"    return {a}({b}, {c})"]))
            out.append("")
        return "\n".join(out)

    def tool_round(self, rng: random.Random, n: int) -> tuple[dict[str, Any], dict[str, Any]]:
        """A tool call and its result."""
        tool = rng.choice(_TOOLS)
        path = "src/" + "/".join(self.ident(rng, rng.randint(1, 3))) + ".py"
        if tool == "Bash":
            cmd = rng.choice([f"pytest tests/test_{self.ident(rng)[0]}.py -q",
                              f"git diff {path}", f"python -m {self.ident(rng)[0]}",
                              "make lint"])
            call: dict[str, Any] = {"command": cmd, "description": self.prose(rng, 6)}
            result = self.log(rng, rng.randint(5, 200))
        elif tool == "Read":
            call = {"file_path": path}
            result = self.code(rng, int(rng.lognormvariate(4.2, 0.9)) + 5)
        elif tool == "Grep":
            word = self.ident(rng)[0]
            call = {"pattern": word, "path": "src"}
            result = "\n".join(f"src/{self.ident(rng)[0]}.py:{rng.randint(1, 900)}:    "
                               f"{word} = {self.ident(rng)[0]}()" for _ in range(rng.randint(1, 60)))
        else:
            old, new = self.ident(rng, 2)
            call = {"file_path": path, "old_string": old, "new_string": new}
            result = f"The file {path} has been updated."
        tid = f"toolu_{self.seed:02d}{n:010d}"
        return ({"type": "tool_use", "id": tid, "name": tool, "input": call},
                {"type": "tool_result", "tool_use_id": tid, "name": tool,
                 "is_error": result.startswith("Traceback"),
                 "content": [{"type": "text", "text": result}]})

    def log(self, rng: random.Random, lines: int) -> str:
        out = []
        failed = rng.random() < 0.3
        if failed:
            out.append("Traceback (most recent call last):")
        for _ in range(lines):
            a, b = self.ident(rng, 2)
            out.append(rng.choice([f"tests/test_{a}.py::test_{b} PASSED",
                                   f'  File "src/{a}.py", line {rng.randint(1, 900)}, in {b}',
                                   f"{rng.choice(_ERRORS)}: {self.prose(rng, 8)}",
                                   f"collected {rng.randint(1, 400)} items"]))
        return "\n".join(out)

    def session(self, rng: random.Random, n: int) -> list[tuple[str, list[dict[str, Any]]]]:
        """(role, blocks) messages of one session."""
        out: list[tuple[str, list[dict[str, Any]]]] = [
            ("user", [{"type": "text", "text": self.prose(rng, rng.randint(8, 60))}])]
        for i in range(rng.randint(5, 40)):
            call, result = self.tool_round(rng, n * 100 + i)
            out.append(("assistant", [{"type": "text", "text": self.prose(rng, rng.randint(5, 40))},
                                      call]))
            out.append(("tool", [result]))
        out.append(("assistant", [{"type": "text", "text": self.prose(rng, rng.randint(20, 120))}]))
        return out


def sessions(seed: int = 7) -> Iterator[list[tuple[str, list[dict[str, Any]]]]]:
    """Sessions without end, the same for the same seed."""
    corpus = Corpus(seed)
    rng = random.Random(seed + 1)
    n = 0
    while True:
        yield corpus.session(rng, n)
        n += 1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=2)
    args = ap.parse_args()
    for _, s in zip(range(args.sessions), sessions(), strict=False):
        print(json.dumps(s)[:3000])


if __name__ == "__main__":
    main()
