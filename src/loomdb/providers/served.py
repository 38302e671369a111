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
