"""A generated Codex rollout of any size, from the real format's shapes.

    python benchmarks/codex_session.py OUT.jsonl [--mb 600] [--events 40000]

Each turn is what a current Codex CLI writes (see the rollout in
tests/fixtures/agent-sessions/codex): the user's `response_item` message and its
`event_msg` echo, a `ghost_snapshot`, then steps as the real file has them (a
`turn_context`, `token_count` events, a `reasoning` item with its summary and encrypted
content and its `agent_reasoning` echo, a `function_call` with JSON arguments and its
`function_call_output`), then the assistant's message with its `agent_message` echo; a
`compacted` item half-way. The encrypted reasoning and the outputs are sized so the file
reaches `--mb` megabytes in about `--events` values, in about the real file's shares
(reasoning items the most, outputs next; an import keeps the outputs, not the
encrypted reasoning).

Writing is fast: each turn's lines are formatted from templates (a counter makes each
line's text its own), never built as objects and dumped, so a 600 MB file takes
seconds. `generate` is what the benchmark and the memory test call.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

SESSION = "019a93b9-f380-7600-98ff-00000000b3c5"
#: tool steps in a turn; a step writes `_STEP` values, a turn `_FIXED` besides its steps
STEPS = 4
_STEP = 7
_FIXED = 8
#: of what a step's values weigh beyond their fixed parts: the reasoning's encrypted
#: content and the command's output (the real rollout in tests/fixtures holds 49% of its
#: bytes in reasoning items and 27% in outputs)
REASONING_SHARE = 0.6
_LINE = ("{n:07d} drwxr-xr-x  src/loomdb/interop/codex.py:{n} parse config module "
         "build test import branch commit session file line reply tool result\\n")
_TOKENS = ('{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{i},'
           '"cached_input_tokens":0,"output_tokens":37,"reasoning_output_tokens":0,'
           '"total_tokens":{i}}},"last_token_usage":{{"input_tokens":10128,'
           '"cached_input_tokens":0,"output_tokens":37,"reasoning_output_tokens":0,'
           '"total_tokens":10165}},"model_context_window":258400}},"rate_limits":'
           '{{"primary":{{"used_percent":52.0,"window_minutes":300,"resets_at":1763422724}},'
           '"secondary":{{"used_percent":40.0,"window_minutes":10080,"resets_at":1763910107}}}}}}')
_CONTEXT = ('{"cwd":"/home/dev/app","approval_policy":"never","sandbox_policy":{"mode":'
            '"workspace-write"},"model":"gpt-5.1-codex","effort":"high","summary":"auto"}')


def _stamp(n: int) -> str:
    return f"2025-11-17T{(n // 3600) % 24:02d}:{(n // 60) % 60:02d}:{n % 60:02d}.{n % 1000:03d}Z"


def _v(n: int, kind: str, payload: str) -> str:
    return f'{{"timestamp":"{_stamp(n)}","type":"{kind}","payload":{payload}}}\n'


def _step(n: int, s: int, output: str, encrypted: str) -> list[str]:
    """One model request of a turn: its reasoning, a shell call and the call's output."""
    think = json.dumps(f"**Reading the parser {n}.{s}**")
    call = f"call_{n:08d}_{s}"
    args = json.dumps(json.dumps({"command": ["bash", "-lc", f"rg -n offset src | head -{s + 1}"],
                                  "workdir": "/home/dev/app"}))
    out = json.dumps(json.dumps({"output": f"{n}.{s}\n" + output,
                                 "metadata": {"exit_code": 0, "duration_seconds": 0.2}}))
    return [
        _v(n, "turn_context", _CONTEXT),
        _v(n, "event_msg", _TOKENS.format(i=10_000 + n)),
        _v(n, "response_item", '{"type":"reasoning","summary":[{"type":"summary_text",'
           f'"text":{think}}}],"content":null,"encrypted_content":"{encrypted}"}}'),
        _v(n, "event_msg", f'{{"type":"agent_reasoning","text":{think}}}'),
        _v(n, "response_item", f'{{"type":"function_call","name":"shell","arguments":{args},'
           f'"call_id":"{call}"}}'),
        _v(n, "response_item", f'{{"type":"function_call_output","call_id":"{call}",'
           f'"output":{out}}}'),
        _v(n, "event_msg", _TOKENS.format(i=20_000 + n)),
    ]


def _turn(n: int, output: str, encrypted: str) -> list[str]:
    """The lines of one turn (`n` makes its texts unique)."""
    ask = json.dumps(f"Turn {n}: find where the parser keeps state and fix the off-by-one "
                     "in the offsets; run the tests after.")
    answer = json.dumps(f"Turn {n} done: the offsets are counted from the start of each "
                        "line now, and the tests pass.")
    lines = [
        _v(n, "response_item", '{"type":"message","role":"user","content":[{"type":'
           f'"input_text","text":{ask}}}]}}'),
        _v(n, "event_msg", f'{{"type":"user_message","message":{ask},"images":[]}}'),
        _v(n, "response_item", '{"type":"ghost_snapshot","ghost_commit":{"id":'
           f'"{n:040x}","parent":"0f022a043b3f8ca67224e1c56d5b85e28a81b910",'
           '"preexisting_untracked_files":[],"preexisting_untracked_dirs":[]}}'),
    ]
    for s in range(STEPS):
        lines += _step(n, s, output, encrypted)
    lines += [
        _v(n, "turn_context", _CONTEXT),
        _v(n, "response_item", '{"type":"message","role":"assistant","content":[{"type":'
           f'"output_text","text":{answer}}}]}}'),
        _v(n, "event_msg", f'{{"type":"agent_message","message":{answer}}}'),
        _v(n, "event_msg", _TOKENS.format(i=30_000 + n)),
        _v(n, "event_msg", '{"type":"task_complete","last_agent_message":null}'),
    ]
    return lines


def generate(path: Path, target_bytes: int = 600_000_000, events: int = 40_000,
             reasoning_share: float = REASONING_SHARE, session: str = SESSION) -> dict[str, int]:
    """Write the rollout; {"bytes", "values", "turns", "messages"} it holds (messages: the
    nodes an import makes). `reasoning_share`: of the bytes beyond each step's fixed
    parts, how much is encrypted reasoning (an import stores none of it) rather than
    command output (an import stores all of it)."""
    turns = max(1, events // (_FIXED + STEPS * _STEP))
    spare = max(0, target_bytes // turns - sum(len(x) for x in _turn(0, "", "")))
    encrypted_bytes = int(spare * reasoning_share) // STEPS
    output_bytes = max(0, (spare - encrypted_bytes * STEPS) // STEPS - 40)
    encrypted = "gAAAAAB" + ("Zm9sZGVkIGFzIHJlYWQ" * (encrypted_bytes // 19 + 1))[:encrypted_bytes]
    output = (_LINE * (output_bytes // len(_LINE) + 1))[:output_bytes].rstrip("\\")
    values = 0
    with path.open("w", encoding="utf-8") as fh:
        fh.write(_v(0, "session_meta", f'{{"id":"{session}","timestamp":"{_stamp(0)}",'
                    '"cwd":"/home/dev/app","originator":"codex_cli_rs","cli_version":"0.58.0",'
                    '"instructions":null,"source":"cli","model_provider":"openai"}'))
        values += 1
        for n in range(turns):
            lines = _turn(n, output, encrypted)
            fh.writelines(lines)
            values += len(lines)
            if n == turns // 2:
                summary = json.dumps(f"Summary of the first {n} turns: the parser's offsets.")
                fh.write(_v(n, "compacted", f'{{"message":{summary},"replacement_history":[]}}'))
                values += 1
        size = fh.tell()
    # per turn: the user's message, an assistant node (reasoning, call) and a tool node
    # (its output) per step, the answer; and the compaction
    messages = turns * (2 + 2 * STEPS) + 1
    return {"bytes": size, "values": values, "turns": turns, "messages": messages}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--mb", type=float, default=600)
    parser.add_argument("--events", type=int, default=40_000)
    args = parser.parse_args()
    start = time.perf_counter()
    got = generate(args.out, int(args.mb * 1e6), args.events)
    print(json.dumps({**got, "seconds": round(time.perf_counter() - start, 2)}))


if __name__ == "__main__":
    main()
