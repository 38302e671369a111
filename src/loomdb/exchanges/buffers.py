"""`POST /v1/completions`: buffer trees, where the prompt is the whole document.

A loom-style client sends the document so far and gets continuations. The document
of a buffer tree is its path's text with no separators, so a prompt is matched by the
longest stored document that is a prefix of it *and ends at a node*: the gateway keeps,
for every buffer node it writes, the document's first characters (`head`, up to
`HEAD` of them), its length and its sha256. Candidates come from one indexed query on
the prompt's own first characters, longest first; each is checked by hashing that
much of the prompt, and the first that matches wins (usually the first tried: the
last continuation the client received).

What follows the match (text the human added) becomes one human node; the `n`
completions become sibling model nodes after it, with provenance. No match: a new
buffer tree whose root is the prompt. The answer ids are node ids; `echo` is not
supported (the document is the store's).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..generation import record as generation_record
from ..headish import Position
from ..storage_ops import storage
from .exchange import MAX_N
from .paths import GATEWAY

if TYPE_CHECKING:
    from ..loom import Loom
    from ..model import Node
    from ..providers.base import Completion
    from ..store.areas import Unit
    from .exchange import Gateway

HEAD = 16
_PASSED = ("temperature", "top_p", "max_tokens", "stop", "seed", "frequency_penalty",
           "presence_penalty", "logit_bias", "user")


def complete(gw: Gateway, body: Any, session: str | None) -> dict[str, Any]:
    """One completions call on a buffer document, recorded; the OpenAI response body."""
    if not isinstance(body, dict):
        raise InvalidInput("body", "must be a JSON object")
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1:
        prompt = prompt[0]
    if not isinstance(prompt, str) or not prompt:
        raise InvalidInput("prompt", "must be one non-empty string (the document)")
    if body.get("stream") or body.get("echo"):
        raise InvalidInput("stream" if body.get("stream") else "echo", "is not supported here")
    n = body.get("n") or 1
    if type(n) is not int or not 1 <= n <= MAX_N:
        raise InvalidInput("n", f"must be an integer from 1 to {MAX_N}")
    spec = gw.spec(body.get("model"))
    options = {k: body[k] for k in _PASSED if body.get(k) is not None}
    if body.get("logprobs") is not None:
        options.update(logprobs=True, top_logprobs=int(body["logprobs"]))
    ctx = {"messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}],
           "options": options}
    answers = gw.client(spec).complete(ctx, n=n, mode="completion", served=gw.served(ctx))
    with gw.lock:
        nodes = record(gw.loom, prompt, answers, body, session)
    return {
        "id": nodes[0].id, "object": "text_completion", "created": int(_now()),
        "model": body["model"],
        "choices": [{"index": i, "text": a.text, "logprobs": _raw_logprobs(a),
                     "finish_reason": "length" if a.stop_reason == "max_tokens" else "stop"}
                    for i, a in enumerate(answers)],
        "usage": _usage(answers, nodes),
        "loomdb": {"tree": nodes[0].tree, "nodes": [n.id for n in nodes]},
    }


def record(loom: Loom, prompt: str, answers: list[Completion], body: dict[str, Any],
           session: str | None) -> list[Node]:
    """The prompt's new text and the continuations, in one transaction."""
    with loom.unit(GATEWAY) as db:
        hit = find(db, loom, prompt)
        if hit is None:
            _, at = loom.new_tree(prompt, mode="buffer", origin={"via": "gateway"})
            remember(db, prompt, at)
        else:
            at = hit[1]
            if len(prompt) > hit[0]:
                at = loom.append(Position(at.id, at.tree), prompt[hit[0]:], role="user",
                                 source="human", origin={"via": "gateway"})
                remember(db, prompt, at)
        ctx = {"gateway": {k: v for k, v in body.items() if k != "prompt"},
               "document": {"through": at.id, "length": len(prompt)}}
        nodes = []
        for answer in answers:
            provenance = generation_record(loom, at.tree, ctx, answer)
            provenance["via"] = "gateway"
            node = loom.append(Position(at.id, at.tree), answer.content, role="assistant",
                               author=answer.alias or answer.model, source="agent",
                               provenance=provenance,
                               tokens=(answer.usage or {}).get("output_tokens"))
            remember(db, prompt + answer.text, node)
            nodes.append(node)
        if session is not None:
            if storage(loom).find_ref(session) is None:
                loom.fork(Position(nodes[0].id, nodes[0].tree), session)
            else:
                loom.set_ref(session, Position(nodes[0].id, nodes[0].tree))
    return nodes


def find(db: Unit, loom: Loom, prompt: str) -> tuple[int, Node] | None:
    """(length, node) of the longest stored document that prefixes `prompt` at a node end."""
    heads = [prompt[:i] for i in range(1, min(HEAD, len(prompt)) + 1)]
    marks = ",".join("?" * len(heads))
    rows = db.execute(
        "SELECT length, digest, node_id FROM gateway_buffers"
        f" WHERE head IN ({marks}) AND length <= ? ORDER BY length DESC", [*heads, len(prompt)])
    for length, digest, node_id in rows[:64]:
        if _digest(prompt[:length]) == digest and storage(loom).anchor(node_id) is not None:
            return length, loom.node(node_id)
    return None


def remember(db: Unit, document: str, node: Node) -> None:
    db.execute("INSERT INTO gateway_buffers (head, length, digest, tree_id, node_id)"
               " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
               (document[:HEAD], len(document), _digest(document), node.tree, node.id))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _usage(answers: list[Completion], nodes: list[Node]) -> dict[str, int]:
    from .openai_chat import usage

    return usage([a.usage or {"input_tokens": n.total_tokens - n.tokens, "output_tokens": n.tokens}
                  for a, n in zip(answers, nodes, strict=True)])


def _raw_logprobs(answer: Completion) -> Any:
    raw = answer.raw_response
    if isinstance(raw, dict):
        return (raw.get("choices") or [{}])[0].get("logprobs")
    return None


def _now() -> float:
    import time

    return time.time()
