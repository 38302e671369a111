"""Branching: the draft committed, then N continuations of the document written by
models as sibling nodes under it (a buffer tree's own way to generate); and looming
one token at a time: the likeliest next tokens, offered to pick from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any

from .. import generation as G
from ..errors import InvalidInput
from ..headish import Position
from ..model import Node
from ..storage_ops import storage
from .drafts import commit_inside, draft_ref, head_of, position, read_draft, require_buffer
from .values import At

if TYPE_CHECKING:
    from ..generation import Generated, Stream
    from ..loom import Loom
    from ..providers.config import ProvidersConfig


def generate(
    loom: Loom,
    at: At,
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
    served: int | None = None,
) -> Generated:
    """Commit the draft (if any) as a human node, then ask for N continuations of the
    document, stored as N sibling nodes under it; the ref moves to the first.

    The prompt is the document itself (path text + draft, no separators, no system
    prompt unless the tree's options set `include_system`). `Generated.nodes` is
    [the committed draft node, if the draft was not empty] + the continuations.
    Model names and `n` are checked before the draft is committed, so a bad call
    writes nothing; a provider failure after it keeps the committed draft."""
    pos = position(loom, at)
    require_buffer(loom, pos.tree)
    if n < 1 or n > 64:
        raise InvalidInput("-n", f"must be between 1 and 64, got {n}")
    G.pick_models(loom, models, loom.context(pos, options), config, environ)
    ref = draft_ref(loom, pos)
    committed: Node | None = None
    if ref is not None:
        with storage(loom).transaction():
            committed = commit_inside(loom, ref.name, None)
            ref = loom.ref(ref.name)
        pos = Position(head_of(loom, ref), ref.tree, ref,
                       ref.name if ref.kind == "session" else None, dict(ref.selections))
    result = G.generate(
        loom, pos, models=models, n=n, max_tokens=max_tokens, stream=stream, config=config,
        environ=environ, keep_partial=keep_partial, options=options,
        mode=mode or "completion", served=served,
    )
    moved = result.moved
    if ref is not None and not moved:
        # a view, or a session whose head shows an edited version (store() compares the
        # ref's node with the position): move it here, unless someone else moved it
        with storage(loom).transaction():
            now_ref = loom.ref(ref.name)
            if now_ref.node == ref.node:
                storage(loom).move_ref(now_ref, result.nodes[0].id,
                                       f"generate {len(result.nodes)} ({result.nodes[0].author})")
                moved = True
    result.nodes = ([committed] if committed else []) + result.nodes
    result.moved = moved
    result.session = ref.name if ref is not None and ref.kind == "session" else None
    return result


#: the most next tokens one looming step offers (providers give at most 20)
TOP_LIMIT = 20


def next_tokens(
    loom: Loom,
    at: At,
    *,
    top: int = 8,
    models: Sequence[str] = (),
    config: ProvidersConfig | None = None,
    environ: Mapping[str, str] | None = None,
    lock: AbstractContextManager[Any] = nullcontext(),
) -> list[dict[str, Any]]:
    """Single-token looming: the `top` likeliest next tokens of the document (path text
    + draft), best first, each `{"token", "logprob", "probability"}`. One model call of
    one token with its logprobs; nothing is written (a person picks one and it goes
    into the draft). A model that gives no logprobs is refused. The probe's body is
    always held to the allow-list of a caller over HTTP with a ceiling of one token
    (`providers.served.served_body`), so no option of the thread (`n`, a token maximum,
    a provider table) turns it into a full generation."""
    environ = loom.settings.environ if environ is None else environ
    import math

    from ..logprobs import extract
    from ..providers.clients import complete_many

    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= TOP_LIMIT:
        raise InvalidInput("top", f"must be between 1 and {TOP_LIMIT}, got {top}")
    pos = position(loom, at)
    require_buffer(loom, pos.tree)
    ctx = loom.context(pos, None)
    ref = draft_ref(loom, pos)
    draft = read_draft(loom, ref.name) if ref is not None else ""
    messages = list(ctx["messages"])
    if draft:
        messages.append({"role": "user", "content": [{"type": "text", "text": draft}]})
    options = {**ctx["options"], "logprobs": True, "top_logprobs": top}
    ask = {"messages": messages, "options": options}
    [spec] = G.pick_models(loom, list(models)[:1], ask, config, environ)
    with lock:
        [answers] = complete_many([(spec, ask)], 1, max_tokens=1, environ=environ,
                                  blob_reader=loom.blob, mode="completion", served=1)
    assert not isinstance(answers, Exception)
    found = extract(answers[0].raw_response)
    if found is None or not found["top"]:
        raise InvalidInput(f"model {spec.name!r}", "gives no logprobs; choose one that does")
    best = sorted(((t, lp) for t, lp in found["top"][0] if lp is not None),
                  key=lambda pair: -pair[1])[:top]
    return [{"token": t, "logprob": lp, "probability": math.exp(lp)} for t, lp in best]
