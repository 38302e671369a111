"""What every client returns and how alternatives run: `Completion`, the `Client` protocol.

All providers answer through one interface, `complete(ctx, *, n, max_tokens, stream,
mode, blob_reader) -> list[Completion]`, so the CLI verbs (`generate`, `chat`,
`compact`) never care which provider stands behind a model alias.

Alternatives: `n` alternatives are `n` separate requests (not the API's own `n`, which
OpenAI-compatible servers and Anthropic do not all honour); `run_alternatives` runs
remote ones concurrently in threads and calls the stream callback under a lock, so a
callback is never entered twice at once.

Failures: every `ProviderError` raised by `complete` carries `partial: list[Completion]`:
the alternatives that finished plus, when a stream broke, what it had received so far
(with `incomplete=True`), so a caller may keep it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import InvalidInput, ProviderError
from .config import ModelSpec
from .redact import scrub
from .replies import Reply

#: `stream(index, text_delta)`: called with each piece of text as it arrives
StreamCallback = Callable[[int, str], None]


class Sink:
    """A stream callback that also takes an answer's blocks as they open and close.

    Every client calls a stream callback with text; a client that sees its provider's
    blocks (thinking, signatures, tool calls and their JSON arguments as they stream)
    calls `open` / `delta` / `close` of a Sink instead, so a caller can pass them on in
    order. `block` is the block's start (`{"type": "tool_use", "id", "name", ...}`);
    `kind` is text, thinking, signature or input_json."""

    def __call__(self, index: int, text: str) -> None:
        raise NotImplementedError

    def open(self, index: int, block: dict[str, Any]) -> None:
        raise NotImplementedError

    def delta(self, index: int, kind: str, text: str) -> None:
        raise NotImplementedError

    def close(self, index: int) -> None:
        raise NotImplementedError


class _LockedSink(Sink):
    def __init__(self, sink: Sink) -> None:
        self.sink, self.lock = sink, threading.Lock()

    def __call__(self, index: int, text: str) -> None:
        with self.lock:
            self.sink(index, text)

    def open(self, index: int, block: dict[str, Any]) -> None:
        with self.lock:
            self.sink.open(index, block)

    def delta(self, index: int, kind: str, text: str) -> None:
        with self.lock:
            self.sink.delta(index, kind, text)

    def close(self, index: int) -> None:
        with self.lock:
            self.sink.close(index)
#: max threads for the alternatives of one remote request
MAX_PARALLEL = 4


@dataclass
class Completion:
    """One model answer, with everything needed to store and audit it.

    `content` holds text, tool_use and thinking blocks (at least one block: an empty
    answer is one empty text block). `stop_reason` uses Anthropic's words for every
    provider (`end_turn`, `max_tokens`, `stop_sequence`, `tool_use`, `refusal`; other
    values pass through). `usage` is `{"input_tokens", "output_tokens", ...}` or None
    when the provider did not say. `provider_request` is the exact body sent;
    `raw_response` the provider's JSON (for a stream, the list of chunks).
    `incomplete` is True only for an answer cut short by a failure (a broken stream);
    a length-limited answer is complete with `stop_reason == "max_tokens"`. `provider`
    is the provider kind (`openai`, `anthropic`, `local`), `alias` the pointer's name.
    """

    content: list[dict[str, Any]]
    stop_reason: str | None
    usage: dict[str, int] | None
    model: str
    provider: str
    provider_request: dict[str, Any]
    raw_response: Any
    latency_ms: int
    incomplete: bool = False
    alias: str = ""

    @property
    def text(self) -> str:
        """The answer's text blocks joined."""
        return "".join(b["text"] for b in self.content if b["type"] == "text")


class Client(Protocol):
    """A model behind one provider pointer. `served` is given for a caller over HTTP:
    the most tokens an answer may take when the request names none (see
    `loomdb.providers.served.served_body`, the allow-list every client applies then)."""

    def complete(
        self,
        ctx: Mapping[str, Any],
        *,
        n: int = 1,
        max_tokens: int | None = None,
        stream: StreamCallback | None = None,
        mode: str | None = None,
        blob_reader: Callable[[str], bytes] | None = None,
        served: int | None = None,
    ) -> list[Completion]: ...


def provider_error(
    provider: str, why: str, *, retryable: bool = False, partial: Iterable[Completion] = ()
) -> ProviderError:
    """A ProviderError carrying `partial` (see module docstring); any secret of an
    endpoint the message quotes is masked (redact.py)."""
    err = ProviderError(provider, scrub(why), retryable=retryable)
    err.partial = list(partial)  # type: ignore[attr-defined]
    return err


def with_partial(err: ProviderError, partial: Iterable[Completion]) -> ProviderError:
    """`err` with `partial` extended by earlier finished alternatives."""
    err.partial = list(partial) + list(getattr(err, "partial", []))  # type: ignore[attr-defined]
    return err


class Stopwatch:
    """Milliseconds since creation."""

    def __init__(self) -> None:
        self._start = time.monotonic()

    def ms(self) -> int:
        return int((time.monotonic() - self._start) * 1000)


class StreamBroken(Exception):
    """A provider's stream failed while being read; `cause` is the original error."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


def guarded(items: Iterable[Any]) -> Iterator[Any]:
    """Iterate a provider stream, turning any failure inside it into StreamBroken.

    Only the provider's own iteration is guarded: an exception raised by the caller's
    stream callback in the loop body passes through unchanged.
    """
    iterator = iter(items)
    while True:
        try:
            item = next(iterator)
        except StopIteration:
            return
        except Exception as exc:  # noqa: BLE001 - any failure of the transport
            raise StreamBroken(exc) from exc
        yield item


def locked_callback(stream: Callable[..., None]) -> Callable[..., None]:
    """`stream` made safe to call from several threads (one call at a time)."""
    if isinstance(stream, Sink):
        return _LockedSink(stream)
    lock = threading.Lock()

    def call(*args: Any) -> None:
        with lock:
            stream(*args)

    return call


def run_alternatives(
    n: int,
    one: Callable[[int, StreamCallback | None], Completion],
    stream: StreamCallback | None,
    *,
    parallel: bool,
) -> list[Completion]:
    """Run `one(index, stream)` for each of `n` alternatives; results in index order."""
    if n < 1:
        raise InvalidInput("n", f"must be at least 1, got {n}")
    if not parallel or n == 1:
        done: list[Completion] = []
        for i in range(n):
            try:
                done.append(one(i, stream))
            except ProviderError as err:
                with_partial(err, done)
                raise
        return done
    callback = locked_callback(stream) if stream else None
    with ThreadPoolExecutor(max_workers=min(n, MAX_PARALLEL)) as pool:
        futures = [pool.submit(one, i, callback) for i in range(n)]
        results = [(f.exception(), f) for f in futures]
    finished = [f.result() for exc, f in results if exc is None]
    for exc, _ in results:
        if isinstance(exc, ProviderError):
            raise with_partial(exc, finished)
        if exc is not None:
            raise exc
    return finished


def with_defaults(ctx: Mapping[str, Any], spec: ModelSpec) -> dict[str, Any]:
    """The context with the spec's default params under its own options (every client
    builds its request from this, so a bad token limit is refused here for all)."""
    options = {**spec.params, **(ctx.get("options") or {})}
    for key in TOKEN_LIMITS:
        if options.get(key) is not None:
            token_limit(options[key], key)
    return {**ctx, "options": options}


#: the options that bound an answer's length
TOKEN_LIMITS = ("max_tokens", "max_completion_tokens", "max_output_tokens")
MAX_TOKEN_LIMIT = 2**31 - 1


def token_limit(value: Any, where: str = "max_tokens") -> int | None:
    """A limit on an answer's tokens: None, or a whole number from 1. Zero or less would
    mean "no limit" to some providers (llama.cpp runs to the end of the context)."""
    if value is None:
        return None
    if type(value) is not int or not 1 <= value <= MAX_TOKEN_LIMIT:
        raise InvalidInput(where, f"must be a whole number of tokens from 1 to {MAX_TOKEN_LIMIT},"
                           f" got {value!r}")
    return value


def choose_mode(mode: str | None, options: Mapping[str, Any], spec: ModelSpec) -> str:
    chosen = mode or options.get("mode") or spec.mode
    if chosen not in ("chat", "completion"):
        raise InvalidInput("mode", f"must be chat or completion, got {chosen!r}")
    return str(chosen)


def completion(
    reply: Reply, spec: ModelSpec, body: dict[str, Any], raw: Any, ms: int, incomplete: bool = False
) -> Completion:
    return Completion(
        content=reply.content,
        stop_reason=reply.stop_reason,
        usage=reply.usage,
        model=reply.model or spec.model,
        provider=spec.kind,
        provider_request=body,
        raw_response=raw,
        latency_ms=ms,
        incomplete=incomplete,
        alias=spec.name,
    )
