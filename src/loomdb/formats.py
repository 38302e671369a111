"""The context at a point as a request body: normalized, or in a provider's format.

`request` is what `loomdb context --format ...` prints and what a gateway will send:
the normalized context (seed 002), optionally fitted into a token budget, rendered as
an OpenAI chat request, an Anthropic messages request or a completion prompt.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .errors import check_choice
from .generation import pick_models
from .headish import Position

if TYPE_CHECKING:
    from .loom import Loom
    from .providers.config import ProvidersConfig

FORMATS = ("normalized", "openai", "anthropic", "completion")
STRATEGIES = ("truncate-middle", "rolling-window", "stop")


def request(
    loom: Loom,
    at: str | Position,
    *,
    format: str = "normalized",
    model: str | None = None,
    budget: int | None = None,
    strategy: str = "truncate-middle",
    options: dict[str, Any] | None = None,
    config: ProvidersConfig | None = None,
    environ: Mapping[str, str] | None = None,
    normalized: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The request body at `at`; with `budget`, fitted to it and `tokens` added.
    `normalized` is the context to render when the caller built it (the front door
    passes what an agent's turn sends there); else the path's own context."""
    check_choice("--format", format, FORMATS)
    check_choice("--strategy", strategy, STRATEGIES)
    if normalized is None:
        normalized = loom.context(at, options)
    tokens = None
    if budget is not None:
        from .providers.budget import fit

        normalized, tokens = fit(normalized, budget, strategy)
    body = _render(loom, normalized, format, model, config, environ)
    if tokens is not None:
        body = {**body, "tokens": tokens}
    return body


def _render(
    loom: Loom, normalized: dict[str, Any], format: str, model: str | None,
    config: ProvidersConfig | None, environ: Mapping[str, str] | None,
) -> dict[str, Any]:
    """Normalized -> the body of `format` (the model names the provider's model id)."""
    from .providers import requests as openai_req
    from .providers.requests_anthropic import anthropic_request

    if format == "normalized":
        return normalized
    if format == "completion":
        return openai_req.completion_prompt(normalized)
    spec = pick_models(loom, [model] if model else [], normalized, config, environ)[0]
    if format == "openai":
        return openai_req.openai_chat_request(normalized, model=spec.model, blob_reader=loom.blob)
    return anthropic_request(normalized, model=spec.model, blob_reader=loom.blob)
