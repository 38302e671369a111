"""The model-provider layer: normalized context in, provider requests and completions out.

This package knows nothing of the store. It takes a plain normalized context
(`{"messages": [{"role", "content": [blocks], "cache"?}], "options": {...}}`), a
`blob_reader(ref) -> bytes` for media, and a model alias, and gives back request bodies,
token budgets and `Completion`s. Modules:

- `requests`, `requests_anthropic`: pure request builders (OpenAI chat and completions,
  Anthropic Messages, the plain prompt for base models);
- `replies`: provider replies parsed back into blocks;
- `config`: provider pointers (aliases in providers.toml) and API keys from the env;
- `clients`: OpenAI-compatible and Anthropic clients, `client_for`, `complete_many`;
- `local`: SmolLM2 in process through llama.cpp;
- `budget`: fitting a context into a token budget.

The SDKs and llama.cpp are imported only when a client needs them.
"""

from .base import Client, Completion, StreamCallback
from .budget import STRATEGIES, fit
from .clients import AnthropicClient, OpenAIClient, client_for, complete_many
from .config import (
    ModelSpec,
    ProvidersConfig,
    default_model,
    load_config,
    parse_config,
    resolve_model,
)
from .replies import parse_anthropic_message, parse_openai_chat, parse_openai_completion
from .requests import completion_prompt, openai_chat_request, openai_completion_request
from .requests_anthropic import anthropic_request

__all__ = [
    "STRATEGIES",
    "AnthropicClient",
    "Client",
    "Completion",
    "ModelSpec",
    "OpenAIClient",
    "ProvidersConfig",
    "StreamCallback",
    "anthropic_request",
    "client_for",
    "complete_many",
    "completion_prompt",
    "default_model",
    "fit",
    "load_config",
    "openai_chat_request",
    "openai_completion_request",
    "parse_anthropic_message",
    "parse_config",
    "parse_openai_chat",
    "parse_openai_completion",
    "resolve_model",
]
