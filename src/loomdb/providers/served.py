"""Which models a caller over HTTP may spend the operator's keys on.

A model call costs money on the operator's account, so a caller over HTTP (the API's
generate routes, the `/v1` gateway) may name only the aliases the operator chose:
`[server] models = [...]` in providers.toml, or by default every alias configured
there plus the built-in `local`. `openai:<id>` / `anthropic:<id>` and bare model ids
are refused unless they are such an alias. A thread's options cannot redirect a
configured alias either: `provider_ptr` / `model` must name a served alias, and the
provider tables merged into the request (`options.openai`, `options.anthropic`) may
not carry a `model`. One request names at most `limits.models` models and asks for at
most `limits.alternatives` answers over all of them (models x n). Each refusal is an
InvalidInput (400) of one line, before any model is asked.

What is sent is held too: for such a caller every client passes the body it built
through `served_body`, an allow-list of sampling fields and of what loomdb builds from
the conversation, so no option (`n`, `best_of`, `service_tier`, `reasoning_effort`, a
token maximum, a key of a provider table) spends more than the request asked; the
answer's token maximum is the request's own, else the alias's, else
`limits.answer_tokens`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InvalidInput
from ..limits import Limits
from .config import ModelSpec, ProvidersConfig, builtin_models, resolve_model

#: the keys of a provider table that would change which model answers
REDIRECTS = ("model",)


def served(config: ProvidersConfig | None) -> tuple[str, ...]:
    """The aliases HTTP callers may use, in a stable order."""
    config = config or ProvidersConfig(models=builtin_models())
    if config.served is not None:
        return config.served
    return tuple(sorted(config.models))


def served_model(name: Any, config: ProvidersConfig | None) -> ModelSpec:
    """The spec of a served alias; anything else is refused, naming what is served."""
    allowed = served(config)
    if not isinstance(name, str) or name not in allowed:
        raise InvalidInput("model", f"{str(name)[:100]!r} is not served here; use one of "
                           f"{', '.join(allowed)} (the operator lists them in providers.toml)")
    return resolve_model(name, config)


def served_alias(name: str, config: ProvidersConfig | None) -> ModelSpec:
    """The served alias a client's model name stands for (the gateway: clients send
    their own names, e.g. Claude Code's `claude-opus-...` and a small model for side
    requests). A served alias is itself; else the first of the operator's patterns
    (`[server.names]`, shell globs, in file order) that matches maps it to an alias;
    else a configured alias or model id that is not served is refused (InvalidInput)
    and any other name is a NotFound naming what is served."""
    import fnmatch

    config = config or ProvidersConfig(models=builtin_models())
    allowed = served(config)
    if name in allowed:
        return config.models[name]
    for pattern, alias in config.names:
        if fnmatch.fnmatchcase(name, pattern):
            return served_model(alias, config)
    try:
        resolve_model(name, config)
    except InvalidInput:
        from ..errors import NotFound

        raise NotFound("model", name[:100], list(allowed)) from None
    return served_model(name, config)


def check_request(names: Sequence[str], n: int, options: Mapping[str, Any],
                  config: ProvidersConfig | None, limits: Limits) -> None:
    """Refuse a generate request over HTTP that names a model not served, lets the
    thread's options redirect one, or asks for too many models or answers."""
    if len(names) > limits.models:
        raise InvalidInput("models", f"at most {limits.models} models in one request "
                           "(LOOMDB_LIMIT_MODELS)")
    if max(1, len(names)) * n > limits.alternatives:
        raise InvalidInput("n", f"{max(1, len(names))} model(s) x n={n} asks for more than "
                           f"{limits.alternatives} answers (LOOMDB_LIMIT_ALTERNATIVES)")
    for name in names:
        served_model(name, config)
    pointer = options.get("provider_ptr") or options.get("model")
    if not names and pointer is not None:
        served_model(pointer, config)
    for table in ("openai", "anthropic"):
        extra = options.get(table)
        if isinstance(extra, Mapping) and any(k in extra for k in REDIRECTS):
            raise InvalidInput(f"options.{table}.model",
                               "over HTTP the options cannot change a configured model")


#: the sampling fields a caller over HTTP may set, whatever the provider
SAMPLING = frozenset({"temperature", "top_p", "top_k", "min_p", "stop", "stop_sequences",
                      "seed", "frequency_penalty", "presence_penalty", "repeat_penalty",
                      "response_format"})
#: the fields loomdb builds from the conversation itself: what is said, the tools, the
#: stream, the logprobs a page shows, and Anthropic's thinking (bounded by max_tokens)
BUILT = frozenset({"model", "messages", "prompt", "system", "tools", "tool_choice",
                   "parallel_tool_calls", "stream", "stream_options", "logprobs",
                   "top_logprobs", "thinking", "metadata", "include_system"})
#: the fields that bound an answer's length, by provider
TOKEN_MAXIMA = ("max_tokens", "max_completion_tokens", "max_output_tokens")
#: the most alternative tokens a logprobs request may ask for (OpenAI's own bound)
TOP_LOGPROBS = 20


def served_body(body: Mapping[str, Any], spec: ModelSpec, ceiling: int) -> dict[str, Any]:
    """A provider body as it is sent for a caller over HTTP: only `BUILT` and `SAMPLING`
    fields (never `n`, `best_of`, `service_tier`, `reasoning_effort` or any other key a
    thread's options or a provider table put in: such a field is sent only when the
    operator's own `params` of the alias set it, with the operator's value), and one
    token maximum, the body's own clamped to `ceiling` (see `ceiling`). Every client
    passes its built body through here when it serves such a caller, so the rule holds
    in one place whatever the options held."""
    operator = _operator_fields(spec)
    out = {k: v for k, v in body.items() if k in BUILT or k in SAMPLING}
    out.update({k: operator[k] for k in body if k not in out and k in operator
                and k not in TOKEN_MAXIMA})
    for key in ("logprobs", "top_logprobs"):
        value = out.get(key)
        if type(value) is int and not 0 <= value <= TOP_LOGPROBS:
            out[key] = min(max(value, 0), TOP_LOGPROBS)
    asked = [k for k in TOKEN_MAXIMA if type(body.get(k)) is int]
    if asked:  # under the name the body used first (o-series models take only one)
        out[asked[0]] = max(1, min(*(body[k] for k in asked), ceiling))
    return out


def _operator_fields(spec: ModelSpec) -> dict[str, Any]:
    """The body fields the operator's `params` set for the alias (its provider table
    flattened in)."""
    params = dict(spec.params)
    for table in ("openai", "anthropic"):
        extra = params.pop(table, None)
        if isinstance(extra, Mapping):
            params.update(extra)
    return params


def ceiling(served: int, max_tokens: int | None, spec: ModelSpec) -> int:
    """The most tokens an answer for a caller over HTTP may take: the request's own
    maximum, else the operator's (`params.max_tokens` of the alias), else `served`
    (the edge's: `limits.answer_tokens`)."""
    if max_tokens is not None:
        return max_tokens
    own = [v for k in TOKEN_MAXIMA if type(v := spec.params.get(k)) is int and v > 0]
    return min(own) if own else served


def checked(body: dict[str, Any], spec: ModelSpec, max_tokens: int | None,
            served: int | None) -> dict[str, Any]:
    """The body as built, for a trusted caller (`served` None); for a caller over HTTP,
    through `served_body` with its `ceiling`: the one place every client checks it."""
    if served is None:
        return body
    return served_body(body, spec, ceiling(served, max_tokens, spec))
