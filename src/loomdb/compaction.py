"""Compaction (seed 004): a node that summarizes older turns so the context stays small.

`compact` asks a model to summarize every message of the current context except the
newest `keep` turns (a previous summary included, so compacting again summarizes the
summary too), then appends a node of kind `compaction` holding the summary. Its
hyperedge sources are the turns it kept, so its chain hash commits to what was kept.
From then on, context assembly uses: the summary, the kept turns, then newer turns.
Nothing is deleted: every earlier node is still addressable and its own context is
unchanged. A `compactions` row records the model, tokens before and after, duration
and trigger. `maybe_compact` runs it automatically past a token threshold taken from
the thread's options: `{"compact": {"threshold": 3000, "keep": 4}}`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .content import plain_text
from .errors import InvalidInput
from .headish import Position
from .model import Node, now
from .store.base import BODY, ID, KIND, ROLE

if TYPE_CHECKING:
    from .loom import Loom
    from .providers.config import ProvidersConfig

SUMMARY_HEADER = "Summary of the earlier conversation:\n"
INSTRUCTION = (
    "Summarize the conversation above for someone who must continue it. Keep names, "
    "facts, numbers, decisions and open questions. Write plain prose, at most 200 words."
)


def compact(
    loom: Loom,
    at: str | Position,
    *,
    keep: int = 2,
    model: str | None = None,
    config: ProvidersConfig | None = None,
    environ: Mapping[str, str] | None = None,
    trigger: str = "manual",
    max_tokens: int = 300,
) -> Node:
    """Write a compaction node at `at`; a session named as `at` moves to it."""
    import json

    from .generation import pick_models, record
    from .providers.clients import client_for
    from .tokens import count_messages

    if keep < 0:
        raise InvalidInput("--keep", f"must be 0 or more, got {keep}")
    pos = at if isinstance(at, Position) else loom.resolve(at)
    before = loom.context(pos)
    rows = loom.context_rows(pos)
    cut = _cut(rows, keep)
    older, kept = rows[:cut], rows[cut:]
    if not older:
        raise InvalidInput("compact", f"nothing to summarize: the context holds {len(rows)} turns")
    transcript = [{"role": r[ROLE] if r[KIND] != "compaction" else "user",
                   "content": json.loads(r[BODY])} for r in older]
    request = {
        "messages": transcript + [{"role": "user", "content": [{"type": "text", "text": INSTRUCTION}]}],
        "options": {k: v for k, v in before["options"].items() if k not in ("compact",)},
    }
    spec = pick_models(loom, [model] if model else [], before, config, environ)[0]
    start = time.perf_counter()
    answer = client_for(spec, environ=environ, blob_reader=loom.blob).complete(
        request, n=1, max_tokens=max_tokens, mode="chat")[0]
    duration = int((time.perf_counter() - start) * 1000)
    summary = SUMMARY_HEADER + plain_text(answer.content).strip()
    with loom.transaction():
        provenance = record(loom, pos.tree, request, answer)
        node = loom.append(
            pos, summary, role="user", kind="compaction", author=answer.alias or answer.model,
            source="agent", provenance=provenance, also=[(r[ID], "context") for r in kept],
            policy="fail",
        )
        after = loom.context(Position(node.id, node.tree))
        loom.record_compaction({
            "node_id": node.id, "tree_id": node.tree, "model": answer.model,
            "tokens_before": count_messages(before["messages"]),
            "tokens_after": count_messages(after["messages"]), "duration_ms": duration,
            "trigger": trigger, "summarized": len(older), "created_at": now(),
        })
    return node


def _cut(rows: list[tuple[Any, ...]], keep: int) -> int:
    """Where the kept tail starts: the newest `keep` turns, never starting on a tool
    result (its tool call must stay with it)."""
    cut = max(0, len(rows) - keep)
    while 0 < cut < len(rows) and rows[cut][ROLE] == "tool":
        cut -= 1
    return cut


def maybe_compact(
    loom: Loom, at: str | Position, *, config: ProvidersConfig | None = None,
    environ: Mapping[str, str] | None = None,
) -> Node | None:
    """Compact when the thread's options ask for it and its context is past the threshold."""
    from .tokens import count_messages

    pos = at if isinstance(at, Position) else loom.resolve(at)
    ctx = loom.context(pos)
    rule = ctx["options"].get("compact")
    if not isinstance(rule, dict) or "threshold" not in rule:
        return None
    if count_messages(ctx["messages"]) <= int(rule["threshold"]):
        return None
    return compact(loom, pos, keep=int(rule.get("keep", 2)), model=rule.get("model"),
                   config=config, environ=environ, trigger="auto")
