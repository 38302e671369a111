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

A compaction must make the context smaller. The summary is bounded by the tokens it
replaces: the model may write at most `max_tokens` (default `SUMMARY_FRACTION` of the
tokens of the summarized messages, and never more than would leave the context as
large as before). The model's tokens are not loomdb's yardstick, so the result is
counted again: a summary that does not make the context shorter is asked for once
more with half the room, and if it still does not, `NotCompacted` is raised and
nothing is written. When even an empty summary would not be shorter, the model is not
called at all.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .content import plain_text
from .errors import InvalidInput, NotCompacted
from .headish import Position
from .model import Node, now
from .storage_ops import storage
from .store.base import BODY, ID, KIND, ROLE

if TYPE_CHECKING:
    from .loom import Loom
    from .providers.config import ProvidersConfig

SUMMARY_HEADER = "Summary of the earlier conversation:\n"
INSTRUCTION = (
    "Summarize the conversation above for someone who must continue it. Keep names, "
    "facts, numbers, decisions and open questions. Write plain prose, at most {words} words."
)
#: default bound on a summary, as a fraction of the tokens of the messages it replaces
SUMMARY_FRACTION = 0.5


def compact(
    loom: Loom,
    at: str | Position,
    *,
    keep: int = 2,
    model: str | None = None,
    config: ProvidersConfig | None = None,
    environ: Mapping[str, str] | None = None,
    trigger: str = "manual",
    max_tokens: int | None = None,
) -> Node:
    """Write a compaction node at `at`; a session named as `at` moves to it. Raises
    NotCompacted (writing nothing) when the summary would not make the context shorter;
    `tokens_before` / `tokens_after` are kept in its `compactions` row."""
    environ = loom.settings.environ if environ is None else environ
    import json

    from .generation import pick_models, record
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
    if max_tokens is not None and max_tokens < 1:
        raise InvalidInput("--max-tokens", f"must be 1 or more, got {max_tokens}")
    transcript = [{"role": r[ROLE] if r[KIND] != "compaction" else "user",
                   "content": json.loads(r[BODY])} for r in older]
    replaced = count_messages(transcript)
    room = replaced - count_messages([_summary_message("")]) - 1
    if room < 1:
        raise NotCompacted(replaced, replaced + 1 - room)
    bound = min(room, max_tokens or max(1, int(replaced * SUMMARY_FRACTION)))
    spec = pick_models(loom, [model] if model else [], before, config, environ)[0]
    start = time.perf_counter()
    request, answer, summary = _summarize(loom, spec, before, transcript, bound, environ)
    if count_messages([_summary_message(summary)]) >= replaced:  # once more, with half the room
        request, answer, summary = _summarize(
            loom, spec, before, transcript, max(1, bound // 2), environ)
        if (got := count_messages([_summary_message(summary)])) >= replaced:
            raise NotCompacted(replaced, got)
    duration = int((time.perf_counter() - start) * 1000)
    with storage(loom).transaction():
        provenance = record(loom, pos.tree, request, answer)
        node = loom.append(
            pos, SUMMARY_HEADER + summary, role="user", kind="compaction",
            author=answer.alias or answer.model, source="agent", provenance=provenance, also=[(r[ID], "context") for r in kept],
            policy="fail",
        )
        after = loom.context(Position(node.id, node.tree))
        storage(loom).record_compaction({
            "node_id": node.id, "tree_id": node.tree, "model": answer.model,
            "tokens_before": count_messages(before["messages"]),
            "tokens_after": count_messages(after["messages"]), "duration_ms": duration,
            "trigger": trigger, "summarized": len(older), "created_at": now(),
        })
    return node


def _summary_message(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": SUMMARY_HEADER + text}]}


def _summarize(
    loom: Loom, spec: Any, before: Mapping[str, Any], transcript: list[dict[str, Any]],
    max_tokens: int, environ: Mapping[str, str] | None,
) -> tuple[dict[str, Any], Any, str]:
    """Ask the model for a summary of at most `max_tokens`: (request, answer, text)."""
    from .providers.clients import client_for

    words = max(5, int(max_tokens * 0.7))  # about 0.75 words per token; ask for fewer
    ask = INSTRUCTION.format(words=words)
    request = {
        "messages": transcript + [{"role": "user", "content": [{"type": "text", "text": ask}]}],
        "options": {k: v for k, v in before["options"].items() if k not in ("compact",)},
    }
    answer = client_for(spec, environ=environ, blob_reader=loom.blob).complete(
        request, n=1, max_tokens=max_tokens, mode="chat")[0]
    return request, answer, plain_text(answer.content).strip()


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
