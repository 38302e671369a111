"""Token logprobs of a generated answer: taken from the raw response, kept compactly.

Providers return logprobs inside their raw response, which the generation record
stores whole and whose hash enters the node's chain hash; so the logprobs are covered
by the chain without being part of the content (or its id). For reading, a compact
copy rides in the node's provenance:

    {"tokens": ["Hello", ","], "logprobs": [-0.0123, -1.5],
     "top": [[["Hello", -0.0123], ["Hi", -4.6]], [[",", -1.5], ["!", -0.3]]]}

(logprobs rounded to 4 decimals; `top` holds each position's alternatives, best first).
Read from OpenAI chat responses (`choices[0].logprobs.content`), OpenAI / llama.cpp
completions (`tokens`, `token_logprobs`, `top_logprobs`), and streams (the same in
each chunk).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .storage_ops import storage

if TYPE_CHECKING:
    from .loom import Loom
    from .model import Node

Compact = dict[str, list[Any]]


def extract(raw: Any) -> Compact | None:
    """The compact logprobs of the first choice of a raw response (or stream), if any."""
    out: Compact = {"tokens": [], "logprobs": [], "top": []}
    for part in raw if isinstance(raw, list) else [raw]:
        choice = _choice(part)
        lp = choice.get("logprobs") if choice else None
        if isinstance(lp, Mapping) and "content" in lp:
            _add_chat(out, lp["content"])
        elif isinstance(lp, Mapping):
            _add_completion(out, lp)
    return out if out["tokens"] else None


def _choice(part: Any) -> Mapping[str, Any] | None:
    choices = part.get("choices") if isinstance(part, Mapping) else None
    if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
        return choices[0]
    return None


def _add_chat(out: Compact, items: Any) -> None:
    for item in items or []:
        out["tokens"].append(item.get("token", ""))
        out["logprobs"].append(_round(item.get("logprob")))
        out["top"].append([[t.get("token", ""), _round(t.get("logprob"))]
                           for t in item.get("top_logprobs") or []])


def _add_completion(out: Compact, lp: Mapping[str, Any]) -> None:
    tokens = lp.get("tokens") or []
    values = lp.get("token_logprobs") or [None] * len(tokens)
    tops = lp.get("top_logprobs") or [None] * len(tokens)
    for token, value, top in zip(tokens, values, tops, strict=False):
        out["tokens"].append(token)
        out["logprobs"].append(_round(value))
        pairs = sorted((top or {}).items(), key=lambda kv: -kv[1])
        out["top"].append([[t, _round(v)] for t, v in pairs])


def _round(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else max(round(number, 4), -9999.0)


def rows(compact: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per token: text, logprob, probability and the alternatives, for display."""
    out = []
    for token, value, top in zip(compact["tokens"], compact["logprobs"], compact["top"],
                                 strict=False):
        out.append({
            "token": token, "logprob": value,
            "probability": None if value is None else math.exp(value),
            "top": [{"token": t, "logprob": v, "probability": math.exp(v)}
                    for t, v in top if v is not None],
        })
    return out


def of_node(loom: Loom, node: Node) -> Compact:
    """A node's logprobs, checked against the chain: the generation record's raw response
    must hash to the node's `response_hash` (which its chain hash covers), and the compact
    copy must be what that response holds. A mismatch is an IntegrityError."""
    from .content import canonical, digest
    from .errors import IntegrityError, InvalidInput

    prov = node.provenance or {}
    compact = prov.get("logprobs")
    if not compact:
        raise InvalidInput(f"node {node.id}", "has no logprobs (generate it with --logprobs K)")
    record = storage(loom).generation(str(prov.get("generation") or ""))
    if record is None or record["tree_id"] != node.tree:  # data names it: only its own tree's
        raise IntegrityError(f"generation record of {node.id}", "present", "missing")
    raw = json.loads(record["raw_response"])
    got = digest(canonical(raw))
    if got != prov.get("response_hash"):
        raise IntegrityError(f"raw response of {node.id}", str(prov.get("response_hash")), got)
    if extract(raw) != compact:
        raise IntegrityError(f"logprobs of {node.id}", "those in the raw response", "others")
    return compact  # type: ignore[no-any-return]
