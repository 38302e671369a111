"""Generation: ask models for continuations at a point, and keep them with provenance.

`generate` builds the normalized context at a position, asks each model for `n`
alternatives (different models run concurrently), and writes every answer as a
sibling node under that position, all in one transaction together with one
provenance record per answer (seed 003's RawApiResponse: the normalized request, the
provider request, the raw response, usage, latency, model). A node's chain hash covers
the hash of its raw response. A session named as the position moves to the first
answer, by compare-and-swap; if someone else moved it meanwhile the answers are still
kept and the session stays where they put it (`Generated.moved` says so).

Failures store nothing: the user's own turn was committed before the call, and an
interrupted stream keeps its partial text only when the caller asks (`keep_partial`),
marked incomplete.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .content import canonical, digest
from .errors import ProviderError
from .headish import Position
from .model import Node, new_id, now
from .storage_ops import storage

if TYPE_CHECKING:
    from .loom import Loom
    from .providers.base import Completion
    from .providers.config import ModelSpec, ProvidersConfig

Stream = Callable[[int, int, str], None]


@dataclass
class Generated:
    """What one `generate` call wrote: the nodes (first model's first answer first)."""

    nodes: list[Node]
    moved: bool = False
    errors: list[ProviderError] = field(default_factory=list)
    session: str | None = None


ModeGenerate = Callable[..., Generated]
_BY_MODE: dict[str, ModeGenerate] = {}


def register_mode(mode: str, generate_in_mode: ModeGenerate) -> None:
    """Generate differently in trees of `mode`: a mode's own module registers itself
    (`loomdb.buffer` for buffer trees), so this module never imports it."""
    _BY_MODE[mode] = generate_in_mode


def generate_at(loom: Loom, at: str | Position, **options: Any) -> Generated:
    """`generate` as the tree's mode wants it: dialogue trees here; a registered mode
    (buffer trees: the draft is committed first, see `loomdb.buffer.generate`) there."""
    pos = at if isinstance(at, Position) else loom.resolve(at)
    special = _BY_MODE.get(storage(loom).tree_settings(pos.tree).mode)
    if special is not None:
        return special(loom, pos, **options)
    return generate(loom, pos, **options)


def pick_models(
    loom: Loom, names: Sequence[str], ctx: Mapping[str, Any],
    config: ProvidersConfig | None, environ: Mapping[str, str] | None,
) -> list[ModelSpec]:
    """Models named on the call, else the one the thread's options point at, else the default."""
    from .providers.config import default_model, resolve_model

    if names:
        return [resolve_model(n, config) for n in names]
    pointer = ctx["options"].get("provider_ptr") or ctx["options"].get("model")
    if isinstance(pointer, str):
        return [resolve_model(pointer, config)]
    return [default_model(config, environ)]


def generate(
    loom: Loom,
    at: str | Position,
    *,
    models: Sequence[str] = (),
    n: int = 1,
    max_tokens: int | None = None,
    stream: Stream | None = None,
    config: ProvidersConfig | None = None,
    environ: Mapping[str, str] | None = None,
    keep_partial: bool = False,
    options: dict[str, Any] | None = None,
    mode: str | None = None,
    lock: AbstractContextManager[Any] = nullcontext(),
    served: int | None = None,
    context: dict[str, Any] | None = None,
) -> Generated:
    """N alternatives per model at `at`, stored as sibling nodes with their provenance;
    `lock` is held while the models are asked (one in-process model call at a time in
    a server), never while the store is written. `served`: the caller is over HTTP,
    and every provider body is held to the allow-list (`providers.served.served_body`).
    `context` is what the models are sent when a layer above assembles more than
    `at`'s own path (default: `loom.context`)."""
    environ = loom.settings.environ if environ is None else environ
    from .errors import InvalidInput
    from .providers.clients import complete_many

    if n < 1 or n > 64:
        raise InvalidInput("-n", f"must be between 1 and 64, got {n}")
    pos = at if isinstance(at, Position) else loom.resolve(at)
    ctx = loom.context(pos, options) if context is None else context
    specs = pick_models(loom, models, ctx, config, environ)
    tree = storage(loom).tree_settings(pos.tree)
    mode = mode or ("completion" if tree.mode == "buffer" else None)
    with lock:
        results = complete_many(
            [(spec, ctx) for spec in specs], n, max_tokens=max_tokens, stream=stream,
            blob_reader=loom.blob, environ=environ, return_exceptions=True, mode=mode,
            served=served)
    answers: list[Completion] = []
    errors: list[ProviderError] = []
    for result in results:
        if isinstance(result, ProviderError):
            errors.append(result)
            if keep_partial:
                answers.extend(c for c in getattr(result, "partial", []) if c.incomplete)
        elif isinstance(result, list):
            answers.extend(result)
        else:
            raise result
    if not answers:
        raise errors[0]
    written = store(loom, pos, ctx, answers)
    written.errors = errors
    return written


def store(loom: Loom, pos: Position, ctx: Mapping[str, Any], answers: Sequence[Completion]) -> Generated:
    """Write answers as siblings under `pos`, with provenance, in one transaction."""
    anchor = Position(pos.node, pos.tree, pos.ref, None, pos.selections)
    nodes: list[Node] = []
    moved = False
    with storage(loom).transaction():
        for answer in answers:
            provenance = record(loom, pos.tree, ctx, answer)
            nodes.append(loom.append(
                anchor, answer.content, role="assistant", author=answer.alias or answer.model,
                source="agent", provenance=provenance,
                tokens=(answer.usage or {}).get("output_tokens"),
            ))
        if pos.session is not None:
            ref = loom.ref(pos.session)
            if storage(loom).head(ref) == pos.node:  # still where the answers were asked for
                storage(loom).move_ref(ref, nodes[0].id,
                                       f"generate {len(nodes)} ({nodes[0].author})")
                moved = True
    return Generated(nodes, moved, session=pos.session)


def record(loom: Loom, tree: str, ctx: Mapping[str, Any], answer: Completion) -> dict[str, Any]:
    """Store one generation's provenance; return the node's provenance fields."""
    raw = json.dumps(answer.raw_response, ensure_ascii=False, default=str)
    # the store's secrets policy before the hash: the chain covers what is kept
    found: list[Any] = []
    raw = storage(loom).scanner().json_text(raw, "raw_response", found) or raw
    response_hash = digest(canonical(json.loads(raw)))
    gen_id = new_id()
    storage(loom).record_generation({
        "id": gen_id, "tree_id": tree, "created_at": now(), "provider": answer.provider,
        "model": answer.model, "request": json.dumps(ctx, ensure_ascii=False),
        "provider_request": json.dumps(answer.provider_request, ensure_ascii=False, default=str),
        "raw_response": raw, "response_hash": response_hash,
        "usage": None if answer.usage is None else json.dumps(answer.usage),
        "latency_ms": answer.latency_ms,
        "status": "incomplete" if answer.incomplete else "complete",
    }, found)
    prov: dict[str, Any] = {
        "generation": gen_id, "response_hash": response_hash, "provider": answer.provider,
        "model": answer.model, "alias": answer.alias, "usage": answer.usage,
        "latency_ms": answer.latency_ms, "stop_reason": answer.stop_reason,
    }
    if answer.incomplete:
        prov["incomplete"] = True
    from .logprobs import extract

    logprobs = extract(answer.raw_response)
    if logprobs is not None:
        prov["logprobs"] = logprobs  # compact; the raw response above is what the chain covers
    return prov
