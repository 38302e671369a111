"""One chat exchange, without HTTP: parse the request, ask the model, record it.

`Gateway` holds what every request shares (the Loom, the providers config, a lock
that serializes recording in this process) and turns an OpenAI Chat Completions body
into an `Exchange`: the converted messages, their path digests, the model client
and the options the model gets. The model sees the request's own messages (the
client's view of the conversation is the one it asked about); the store sees the
same messages as a path. Recording happens only after the model answered, in one
transaction (`record.py`), so a failed call writes nothing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, NotFound
from ..limits import Limits
from ..model import new_id
from ..providers.config import ModelSpec, ProvidersConfig, builtin_models, resolve_model
from ..providers.served import served, served_model
from . import convert, paths
from .record import Recorded, record

if TYPE_CHECKING:
    from ..loom import Loom
    from ..providers.base import Client, Completion, StreamCallback

#: request fields passed to the model as options (the rest are the gateway's or unused)
OPTION_KEYS = (
    "temperature", "top_p", "max_tokens", "stop", "seed", "frequency_penalty",
    "presence_penalty", "response_format", "logit_bias", "parallel_tool_calls", "user",
    "tools", "tool_choice", "reasoning_effort", "top_k", "min_p", "repeat_penalty",
)
MAX_N = 16
ClientFactory = Callable[[ModelSpec], "Client"]


@dataclass
class Exchange:
    """A parsed request, ready to send and to record."""

    model: str
    spec: ModelSpec
    client: Client
    msgs: convert.Messages
    digests: paths.Digests
    ctx: dict[str, Any]
    n: int
    params: dict[str, Any]
    ids: list[str]
    created: int
    logprobs: bool


class Gateway:
    """What the gateway's endpoints share (see the module docstring)."""

    def __init__(
        self,
        loom: Loom,
        *,
        config: ProvidersConfig | None = None,
        environ: Mapping[str, str] | None = None,
        clients: ClientFactory | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.loom = loom
        self.limits = limits or loom.limits
        self.config = config or ProvidersConfig(models=builtin_models())
        self.environ = environ
        self._clients = clients
        self._cache: dict[str, Client] = {}
        self.lock = threading.Lock()

    def models(self) -> list[ModelSpec]:
        """The models served (see `loomdb.providers.served`)."""
        return [self.config.models[name] for name in served(self.config)]

    def client(self, spec: ModelSpec) -> Client:
        if spec.name not in self._cache:
            if self._clients is not None:
                self._cache[spec.name] = self._clients(spec)
            else:
                from ..providers.clients import client_for

                self._cache[spec.name] = client_for(
                    spec, environ=self.environ, blob_reader=self.loom.blob)
        return self._cache[spec.name]

    def spec(self, name: Any) -> ModelSpec:
        if not isinstance(name, str) or not name:
            raise InvalidInput("model", "a model name is required")
        try:
            resolve_model(name, self.config)
        except InvalidInput:
            raise NotFound("model", name, sorted(self.config.models)) from None
        return served_model(name, self.config)  # known, and served over HTTP

    def exchange(self, body: Any) -> Exchange:
        """A chat completions body -> an Exchange (typed errors name the bad field)."""
        if not isinstance(body, dict):
            raise InvalidInput("body", "must be a JSON object")
        return self.exchange_of(body, convert.messages(body.get("messages")))

    def exchange_of(
        self, body: dict[str, Any], msgs: convert.Messages,
        sent: list[dict[str, Any]] | None = None,
    ) -> Exchange:
        """An Exchange for already converted messages; `sent` replaces what the model
        sees when it differs from them (a continued response: the path's context)."""
        spec = self.spec(body.get("model"))
        n = body.get("n") or 1
        most = min(MAX_N, self.limits.alternatives)
        if type(n) is not int or not 1 <= n <= most:
            raise InvalidInput("n", f"must be an integer from 1 to {most}")
        options = {k: body[k] for k in OPTION_KEYS if body.get(k) is not None}
        if body.get("max_completion_tokens") is not None:
            options["max_tokens"] = body["max_completion_tokens"]
        logprobs = bool(body.get("logprobs"))
        if logprobs:
            options["logprobs"] = True
            options["top_logprobs"] = _top(body.get("top_logprobs"))
        if sent is None:
            sent = msgs.sent()
        ctx = {"messages": sent, "options": options}
        params = {k: v for k, v in body.items() if k != "messages"}
        return Exchange(
            body["model"], spec, self.client(spec), msgs, paths.Digests(msgs.keys),
            ctx, n, params, [new_id() for _ in range(n)], int(time.time()), logprobs,
        )

    def complete(self, ex: Exchange, stream: StreamCallback | None = None) -> list[Completion]:
        """Ask the model; a ProviderError passes up untouched (nothing is written)."""
        answers = ex.client.complete(ex.ctx, n=ex.n, stream=stream)
        if len(answers) != ex.n:
            raise InvalidInput("n", f"the model gave {len(answers)} answers, not {ex.n}")
        return answers

    def record(self, ex: Exchange, answers: list[Completion], session: str | None,
               after: paths.Hit | None = None) -> Recorded:
        with self.lock:
            return record(self.loom, ex.msgs, ex.digests, answers, ex.ids,
                          request=ex.params, session=session, after=after)


def _top(value: Any) -> int:
    if value is None:
        return 0
    if type(value) is not int or not 0 <= value <= 20:
        raise InvalidInput("top_logprobs", "must be an integer from 0 to 20")
    return value


def chat_response(ex: Exchange, answers: list[Completion], rec: Recorded) -> dict[str, Any]:
    """The chat.completion body: ids are node ids, the first answer's is the response's."""
    return {
        "id": ex.ids[0], "object": "chat.completion", "created": ex.created, "model": ex.model,
        "choices": [
            {"index": i, "message": convert.assistant_message(a.content),
             "finish_reason": convert.finish_reason(a.stop_reason),
             "logprobs": raw_logprobs(a.raw_response) if ex.logprobs else None}
            for i, a in enumerate(answers)
        ],
        "usage": usage(answers, rec),
        "system_fingerprint": None,
        "loomdb": loomdb_part(ex, rec),
    }


def usage(answers: list[Completion], rec: Recorded) -> dict[str, int]:
    """OpenAI usage: the provider's counts, else loomdb's own (a local stream gives none):
    the answer's tokens and the path's before it."""
    given = [a.usage or {"input_tokens": n.total_tokens - n.tokens, "output_tokens": n.tokens}
             for a, n in zip(answers, rec.answers, strict=True)]
    return convert.usage(given)


def loomdb_part(ex: Exchange, rec: Recorded) -> dict[str, Any]:
    """Where the exchange went in the store (an extension field; SDKs keep extras)."""
    return {"tree": rec.tree, "nodes": ex.ids, "request_node": rec.last,
            "written": rec.written, "edited": rec.edited}


def raw_logprobs(raw: Any) -> Any:
    """The choice's logprobs exactly as the provider gave them (chat shape)."""
    if isinstance(raw, Mapping):
        choices = raw.get("choices") or [{}]
        return choices[0].get("logprobs")
    return None


def stream_chat(gw: Gateway, ex: Exchange, session: str | None,
                emit: Callable[[dict[str, Any]], None], usage_wanted: bool) -> None:
    """Ask the model for `ex` as a stream, then record it: every chunk of the
    chat.completion.chunk stream goes to `emit` as it is made (each choice opens with
    its role; the closing chunks, after the commit, carry loomdb's part). A failure
    raises, with nothing recorded."""
    started: set[int] = set()

    def delta(i: int, text: str) -> None:
        if i not in started:  # the role opens each choice, with its first text
            started.add(i)
            emit(chunk(ex, i, {"role": "assistant", "content": ""}))
        if text:
            emit(chunk(ex, i, {"content": text}))

    answers = gw.complete(ex, stream=delta)
    rec = gw.record(ex, answers, session)
    for i, answer in enumerate(answers):
        delta(i, "")
        calls = [b for b in answer.content if b["type"] == "tool_use"]
        if calls:
            emit(chunk(ex, i, {"tool_calls": [convert.tool_call(b, j)
                                              for j, b in enumerate(calls)]}))
        emit(chunk(ex, i, {}, convert.finish_reason(answer.stop_reason), rec))
    if usage_wanted:
        emit({**chunk(ex, 0, {}), "choices": [], "usage": usage(answers, rec)})


def chunk(ex: Exchange, index: int, delta: dict[str, Any], finish: str | None = None,
          rec: Recorded | None = None) -> dict[str, Any]:
    """One chat.completion.chunk."""
    out: dict[str, Any] = {
        "id": ex.ids[0], "object": "chat.completion.chunk", "created": ex.created,
        "model": ex.model,
        "choices": [{"index": index, "delta": delta, "finish_reason": finish, "logprobs": None}],
    }
    if rec is not None:
        out["loomdb"] = loomdb_part(ex, rec)
    return out
