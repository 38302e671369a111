"""Branching: the draft committed, then N continuations of the document written by
models as sibling nodes under it (a buffer tree's own way to generate)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import generation as G
from ..errors import InvalidInput
from ..headish import Position
from ..model import Node
from ..storage_ops import storage
from .drafts import commit_inside, draft_ref, head_of, position, require_buffer
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
        mode=mode or "completion",
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
