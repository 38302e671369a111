"""A model's summary of a stretch of conversation, for the verbs that carry one
(`merge --summary`, `fork --fresh --summary`): asked once, its generation recorded as
any answer's is, so the node holding it has provenance."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..content import plain_text

if TYPE_CHECKING:
    from ..loom import Loom
    from ..providers.config import ProvidersConfig

#: what the model is asked after the transcript
ASK = ("Summarize the conversation above in a few sentences: what was asked, what was "
       "found or decided, and what is still open. Write only the summary.")
#: the longest summary asked for, in tokens
SUMMARY_TOKENS = 400


@dataclass(frozen=True)
class Summary:
    """A model's summary: its text, and `record`, which stores its generation and
    answers the provenance (called in the transaction writing the node holding it)."""

    text: str
    record: Callable[[], dict[str, Any]]


def summarize(lm: Loom, tree: str, messages: list[dict[str, Any]], model: str, *,
              config: ProvidersConfig | None, environ: Mapping[str, str]) -> Summary:
    """Ask `model` for a summary of `messages` (of `tree`), outside any transaction:
    the store stays writable while the model answers."""
    from ..generation import pick_models, record
    from ..providers.clients import client_for

    request = {"messages": [*messages, {"role": "user", "content": [
        {"type": "text", "text": ASK}]}], "options": {}}
    spec = pick_models(lm, [model], request, config, environ)[0]
    answer = client_for(spec, environ=environ, blob_reader=lm.blob).complete(
        request, n=1, max_tokens=SUMMARY_TOKENS, mode="chat")[0]
    return Summary(plain_text(answer.content).strip(),
                   lambda: record(lm, tree, request, answer))
