"""Provider pointers: short model aliases (`nano`, `milli`, `mega`, ...) read from TOML.

A thread's options name a model by alias; this module turns the alias into a
`ModelSpec` (provider kind, base URL, model id, API-key variable, default parameters)
without touching the network. The file lives where the caller says (the CLI's is
chosen by the configuration-trust rule, `loomdb.userconfig`); a missing file means
built-ins only:

    default = "milli"                      # optional: the model used when none is named

    [models.milli]
    provider = "openai"                    # openai | anthropic | local
    model = "gpt-4.1-mini"
    base_url = "https://api.openai.com/v1" # any OpenAI-compatible server (vLLM, Ollama...)
    api_key_env = "OPENAI_API_KEY"         # "" for servers that need no key
    mode = "chat"                          # or "completion" (base models, buffer trees)
    timeout = 60                           # seconds
    max_retries = 2
    context_window = 1000000
    params = { temperature = 0.7 }         # defaults under the thread's options

Built in: `local`, SmolLM2-135M-Instruct run in process. Besides aliases,
`openai:<model>` and `anthropic:<model>` name a model directly with that provider's
defaults, and a configured model id (e.g. `gpt-4.1-mini`) finds its alias when only
one alias points at it.

API keys come only from the environment: the variable in `api_key_env`, by default
`OPENAI_API_KEY` or `ANTHROPIC_API_KEY`. A missing key is a ProviderError naming it.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, ProviderError

KINDS = ("openai", "anthropic", "local")
MODES = ("chat", "completion")
DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
DEFAULT_BASE_URL = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
LOCAL_MODEL = "SmolLM2-135M-Instruct"
LOCAL_CONTEXT = 2048
_FIELDS = {
    "provider",
    "model",
    "base_url",
    "api_key_env",
    "mode",
    "timeout",
    "max_retries",
    "context_window",
    "params",
}


@dataclass(frozen=True)
class ModelSpec:
    """Everything needed to reach one model; `name` is the alias it was found under."""

    name: str
    kind: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    mode: str = "chat"
    timeout: float = 60.0
    max_retries: int = 2
    context_window: int | None = None

    def api_key(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The key from the variables given (an edge's environment, `Settings.environ`;
        None: none), or None when the pointer needs none."""
        if not self.api_key_env:
            return None
        key = (environ or {}).get(self.api_key_env)
        if not key:
            raise ProviderError(
                self.name, f"no API key: set the environment variable {self.api_key_env}"
            )
        return key


@dataclass(frozen=True)
class ProvidersConfig:
    """The known aliases (built-ins included) and the configured default."""

    models: Mapping[str, ModelSpec]
    default: str | None = None
    path: Path | None = None
    #: the aliases served over HTTP (`[server] models`); None: every alias (see served.py)
    served: tuple[str, ...] | None = None
    #: client model names (shell globs, in file order) -> the served alias each gets
    #: (`[server.names]`, see served.py)
    names: tuple[tuple[str, str], ...] = ()


def builtin_models() -> dict[str, ModelSpec]:
    return {
        "local": ModelSpec(
            name="local", kind="local", model=LOCAL_MODEL, context_window=LOCAL_CONTEXT
        )
    }


def _spec(name: str, table: Mapping[str, Any], where: str) -> ModelSpec:
    unknown = set(table) - _FIELDS
    if unknown:
        raise InvalidInput(where, f"unknown fields {sorted(unknown)}; allowed: {sorted(_FIELDS)}")
    kind = table.get("provider")
    if kind not in KINDS:
        raise InvalidInput(f"{where}.provider", f"must be one of {', '.join(KINDS)}, got {kind!r}")
    model = table.get("model", LOCAL_MODEL if kind == "local" else None)
    if not isinstance(model, str) or not model:
        raise InvalidInput(f"{where}.model", "a model id is required")
    mode = table.get("mode", "chat")
    if mode not in MODES:
        raise InvalidInput(f"{where}.mode", f"must be chat or completion, got {mode!r}")
    params = table.get("params", {})
    if not isinstance(params, Mapping):
        raise InvalidInput(f"{where}.params", "must be a table")
    for key in ("base_url", "api_key_env"):
        if table.get(key) is not None and not isinstance(table[key], str):
            raise InvalidInput(f"{where}.{key}", f"must be a string, got {table[key]!r}")
    window = table.get("context_window", LOCAL_CONTEXT if kind == "local" else None)
    return ModelSpec(
        name=name,
        kind=kind,
        model=model,
        mode=mode,
        params=dict(params),
        base_url=table.get("base_url") or DEFAULT_BASE_URL.get(kind),
        api_key_env=table.get("api_key_env", DEFAULT_KEY_ENV.get(kind)) or None,
        timeout=float(_number(table.get("timeout", 60.0), f"{where}.timeout", float)),
        max_retries=int(_number(table.get("max_retries", 2), f"{where}.max_retries", int)),
        context_window=None if window is None else int(
            _number(window, f"{where}.context_window", int, low=1)),
    )


def _number(value: Any, where: str, kind: type, low: float = 0) -> float:
    """A non-negative number from the config (an int where `kind` is int), or InvalidInput."""
    ok = (int,) if kind is int else (int, float)
    if isinstance(value, bool) or not isinstance(value, ok) or not low <= value < float("inf"):
        what = "a whole number" if kind is int else "a number"
        raise InvalidInput(where, f"must be {what} of at least {low:g}, got {value!r}")
    return float(value)


def parse_config(data: Mapping[str, Any], source: str = "providers.toml") -> ProvidersConfig:
    """A config from already-parsed TOML data (built-ins first, then the file's aliases)."""
    models = builtin_models()
    tables = data.get("models", {})
    if not isinstance(tables, Mapping):
        raise InvalidInput(f"{source}: models", "must be a table of aliases")
    for name, table in tables.items():
        if not isinstance(table, Mapping):
            raise InvalidInput(f"{source}: models.{name}", "must be a table")
        models[name] = _spec(name, table, f"{source}: models.{name}")
    default = data.get("default")
    if default is not None and not isinstance(default, str):
        raise InvalidInput(f"{source}: default", "must be a model alias")
    server = data.get("server")
    return ProvidersConfig(models=models, default=default,
                           served=_served(server, models, source),
                           names=_names(server, models, source))


def _served(table: Any, models: Mapping[str, ModelSpec],
            source: str) -> tuple[str, ...] | None:
    """`[server] models = [...]`: the aliases HTTP callers may use (each configured)."""
    if table is None:
        return None
    if not isinstance(table, Mapping) or set(table) - {"models", "names"}:
        raise InvalidInput(f"{source}: server",
                           "must be a table holding only `models` and `names`")
    names = table.get("models")
    if names is None:
        return None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise InvalidInput(f"{source}: server.models", "must be a list of model aliases")
    unknown = [n for n in names if n not in models]
    if unknown:
        raise InvalidInput(f"{source}: server.models",
                           f"{', '.join(map(repr, unknown))} not configured in [models]")
    return tuple(names)


def _names(table: Any, models: Mapping[str, ModelSpec],
           source: str) -> tuple[tuple[str, str], ...]:
    """`[server.names]`: `"claude-*" = "local"`, a client's model name pattern (a shell
    glob) -> a configured alias, first match in file order."""
    names = table.get("names") if isinstance(table, Mapping) else None
    if names is None:
        return ()
    if not isinstance(names, Mapping) or not all(
            isinstance(k, str) and k and isinstance(v, str) for k, v in names.items()):
        raise InvalidInput(f"{source}: server.names",
                           "must be a table of name patterns to model aliases")
    unknown = [v for v in names.values() if v not in models]
    if unknown:
        raise InvalidInput(f"{source}: server.names",
                           f"{', '.join(map(repr, unknown))} not configured in [models]")
    return tuple(names.items())


def load_config(path: str | Path | None) -> ProvidersConfig:
    """Read the TOML file at `path`; a missing file (or None) gives the built-ins."""
    if path is None or not Path(path).exists():
        return ProvidersConfig(models=builtin_models(), path=Path(path) if path else None)
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(str(path), f"not valid TOML: {exc}") from None
    config = parse_config(data, str(path))
    return ProvidersConfig(models=config.models, default=config.default, path=Path(path),
                           served=config.served, names=config.names)


def _direct(name: str) -> ModelSpec | None:
    kind, _, model = name.partition(":")
    if kind in DEFAULT_KEY_ENV and model:
        return _spec(name, {"provider": kind, "model": model}, name)
    return None


def resolve_model(name: str, config: ProvidersConfig | None = None) -> ModelSpec:
    """The spec for an alias, `openai:<id>` / `anthropic:<id>`, or a configured model id."""
    models = (config or ProvidersConfig(models=builtin_models())).models
    if name in models:
        return models[name]
    direct = _direct(name)
    if direct is not None:
        return direct
    by_id = [spec for spec in models.values() if spec.model == name]
    if len(by_id) == 1:
        return by_id[0]
    known = ", ".join(sorted(models))
    raise InvalidInput(
        "model",
        f"unknown model {name!r}; known aliases: {known} "
        "(or name one directly as openai:<model> or anthropic:<model>)",
    )


def has_key(spec: ModelSpec, environ: Mapping[str, str]) -> bool:
    return not spec.api_key_env or bool(environ.get(spec.api_key_env))


def default_model(
    config: ProvidersConfig | None = None, environ: Mapping[str, str] | None = None
) -> ModelSpec:
    """The configured default; else the first configured alias whose key is set; else local.

    Having an API key in the environment is not enough to spend money on an
    unconfigured model: without a configured alias the default stays `local`.
    """
    config = config or ProvidersConfig(models=builtin_models())
    env = environ or {}
    if config.default:
        return resolve_model(config.default, config)
    builtins = builtin_models()
    for name, spec in config.models.items():
        if name not in builtins and has_key(spec, env):
            return spec
    return config.models.get("local") or builtins["local"]
