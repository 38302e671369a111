"""Clients for remote providers (OpenAI-compatible, Anthropic), `client_for` and `complete_many`.

Both remote clients sit on the official SDKs, imported only when a client is made, so
loomdb works without them until a remote model is used (`MissingExtra` says which extra
to install). The OpenAI client serves any OpenAI-compatible server by base URL (OpenAI,
OpenRouter, vLLM, Ollama, llama.cpp's server) in chat mode or completion mode (base
models, buffer trees). The spec's `params` are defaults under the thread's options.

SDK failures become `ProviderError` (see `sdk_error`): unreachable server and timeouts
(retryable), HTTP 429 and 5xx (retryable), other HTTP errors (not), malformed replies.
The SDK's own retries (`ModelSpec.max_retries`) have already run by then.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..errors import InvalidInput, LoomError, MissingExtra, ProviderError
from .base import (
    Client,
    Completion,
    Sink,
    Stopwatch,
    StreamBroken,
    StreamCallback,
    choose_mode,
    completion,
    guarded,
    locked_callback,
    provider_error,
    run_alternatives,
    token_limit,
    with_defaults,
)
from .config import ModelSpec
from .forward import Upstream, as_sent
from .redact import register, shown_url
from .replies import (
    OpenAIStream,
    parse_anthropic_message,
    parse_openai_chat,
    parse_openai_completion,
)
from .requests import openai_chat_request, openai_completion_request
from .requests_anthropic import anthropic_request, forwarded
from .served import checked

BlobReader = Callable[[str], bytes]
#: longest provider error text kept in a ProviderError message
MAX_MESSAGE = 500


def vary_seed(body: dict[str, Any], index: int) -> dict[str, Any]:
    """Alternative `index` of a seeded request gets seed + index, so alternatives differ."""
    if index and body.get("seed") is not None:
        return {**body, "seed": int(body["seed"]) + index}
    return body


def sdk_kwargs(body: Mapping[str, Any], params_type: Any) -> dict[str, Any]:
    """`body` as SDK keyword arguments: fields the SDK does not declare go in `extra_body`.

    The SDKs' `create` methods take declared fields only; provider-specific ones (from
    `options["openai"]` / `options["anthropic"]`) still reach the wire this way, and the
    JSON sent equals `body`.
    """
    known = params_type.__required_keys__ | params_type.__optional_keys__
    kwargs = {k: v for k, v in body.items() if k in known}
    extra = {k: v for k, v in body.items() if k not in known}
    if extra:
        kwargs["extra_body"] = extra
    return kwargs


def sdk_error(provider: str, exc: Exception, sdk: Any, spec: ModelSpec) -> ProviderError:
    """The ProviderError for an exception raised by the openai or anthropic SDK."""
    where = shown_url(spec.base_url)
    if isinstance(exc, sdk.APITimeoutError):
        return provider_error(
            provider,
            f"timed out after {spec.timeout:g}s waiting for {where}",
            retryable=True,
        )
    if isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__ or exc
        return provider_error(provider, f"cannot reach {where}: {cause}", retryable=True)
    if isinstance(exc, sdk.APIStatusError):
        status, message = exc.status_code, exc.message[:MAX_MESSAGE]
        why = f"HTTP {status} from {where}: {message}"
        if status == 429:
            why = f"rate limited (HTTP 429) by {where}: {message}"
        elif status == 404:
            why += f" (is the model id {spec.model!r} right?)"
        err = provider_error(provider, why, retryable=status in (408, 409, 429) or status >= 500)
        err.status = status  # type: ignore[attr-defined]  # a gateway passes it on
        return err
    if isinstance(exc, sdk.APIResponseValidationError):
        return provider_error(provider, f"malformed response: {exc}")
    return provider_error(provider, f"failed: {exc!r}")


class OpenAIClient:
    """Any OpenAI-compatible endpoint, through the `openai` SDK."""

    def __init__(
        self,
        spec: ModelSpec,
        *,
        environ: Mapping[str, str] | None = None,
        blob_reader: BlobReader | None = None,
    ) -> None:
        try:
            import openai
        except ImportError:
            raise MissingExtra("the OpenAI-compatible provider", "openai") from None
        self.spec = spec
        self.blob_reader = blob_reader
        self._openai = openai
        key = spec.api_key(environ)
        register(spec.base_url, key)
        self._sdk = openai.OpenAI(
            base_url=spec.base_url,
            api_key=key or "no-key",
            timeout=spec.timeout,
            max_retries=spec.max_retries,
        )

    def request(
        self,
        ctx: Mapping[str, Any],
        *,
        max_tokens: int | None = None,
        mode: str | None = None,
        blob_reader: BlobReader | None = None,
        served: int | None = None,
    ) -> dict[str, Any]:
        """The body `complete` would send for one alternative (after the spec's defaults;
        for a caller over HTTP, `served`, through `served.served_body`)."""
        ctx = with_defaults(ctx, self.spec)
        token_limit(max_tokens)
        if choose_mode(mode, ctx["options"], self.spec) == "completion":
            body = openai_completion_request(ctx, model=self.spec.model)
        else:
            body = openai_chat_request(
                ctx, model=self.spec.model, blob_reader=blob_reader or self.blob_reader
            )
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        return checked(body, self.spec, max_tokens, served)

    def complete(
        self,
        ctx: Mapping[str, Any],
        *,
        n: int = 1,
        max_tokens: int | None = None,
        stream: StreamCallback | None = None,
        mode: str | None = None,
        blob_reader: BlobReader | None = None,
        served: int | None = None,
    ) -> list[Completion]:
        body = self.request(ctx, max_tokens=max_tokens, mode=mode, blob_reader=blob_reader,
                            served=served)
        chat = "messages" in body

        def one(index: int, callback: StreamCallback | None) -> Completion:
            varied = vary_seed(body, index)
            return (
                self._stream(varied, chat, index, callback)
                if callback
                else self._once(varied, chat)
            )

        return run_alternatives(n, one, stream, parallel=True)

    def _create(self, body: dict[str, Any], chat: bool) -> Any:
        from openai.types import completion_create_params as text_params
        from openai.types.chat import completion_create_params as chat_params

        if chat:
            kwargs = sdk_kwargs(body, chat_params.CompletionCreateParamsNonStreaming)
            return self._sdk.chat.completions.create(**kwargs)
        kwargs = sdk_kwargs(body, text_params.CompletionCreateParamsNonStreaming)
        return self._sdk.completions.create(**kwargs)

    def _once(self, body: dict[str, Any], chat: bool) -> Completion:
        clock = Stopwatch()
        try:
            raw = self._create(body, chat).to_dict()
        except self._openai.OpenAIError as exc:
            raise sdk_error(self.spec.name, exc, self._openai, self.spec) from exc
        parse = parse_openai_chat if chat else parse_openai_completion
        return completion(parse(raw, self.spec.name), self.spec, body, raw, clock.ms())

    def _stream(
        self, body: dict[str, Any], chat: bool, index: int, callback: StreamCallback
    ) -> Completion:
        body = {**body, "stream": True}
        if chat:
            body["stream_options"] = {"include_usage": True}
        clock, acc = Stopwatch(), OpenAIStream(self.spec.name, chat)
        try:
            for chunk in guarded(self._create(body, chat)):
                delta = acc.add(chunk.to_dict())
                if delta:
                    callback(index, delta)
        except self._openai.OpenAIError as exc:
            raise sdk_error(self.spec.name, exc, self._openai, self.spec) from exc
        except StreamBroken as broken:
            partial = completion(
                acc.reply(), self.spec, body, acc.chunks, clock.ms(), incomplete=True
            )
            raise provider_error(
                self.spec.name,
                f"stream interrupted: {broken.cause!r}",
                retryable=True,
                partial=[partial],
            ) from broken.cause
        if acc.finish is None:
            partial = completion(
                acc.reply(), self.spec, body, acc.chunks, clock.ms(), incomplete=True
            )
            raise provider_error(
                self.spec.name,
                "stream ended without a finish reason",
                retryable=True,
                partial=[partial],
            )
        return completion(acc.reply(), self.spec, body, acc.chunks, clock.ms())


class AnthropicClient:
    """Anthropic's Messages API, through the `anthropic` SDK."""

    def __init__(
        self,
        spec: ModelSpec,
        *,
        environ: Mapping[str, str] | None = None,
        blob_reader: BlobReader | None = None,
    ) -> None:
        try:
            import anthropic
        except ImportError:
            raise MissingExtra("the Anthropic provider", "anthropic") from None
        self.spec = spec
        self.blob_reader = blob_reader
        self._anthropic = anthropic
        from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

        self._params = MessageCreateParamsNonStreaming
        key = spec.api_key(environ)
        register(spec.base_url, key)
        self._sdk = anthropic.Anthropic(
            base_url=spec.base_url,
            api_key=key,
            timeout=spec.timeout,
            max_retries=spec.max_retries,
        )
        self._upstream: Upstream | None = None  # made on the first forwarded request

    def request(
        self,
        ctx: Mapping[str, Any],
        *,
        max_tokens: int | None = None,
        blob_reader: BlobReader | None = None,
        served: int | None = None,
    ) -> dict[str, Any]:
        body = anthropic_request(
            with_defaults(ctx, self.spec),
            model=self.spec.model,
            max_tokens=token_limit(max_tokens),
            blob_reader=blob_reader or self.blob_reader,
        )
        return checked(body, self.spec, max_tokens, served)

    def complete(
        self,
        ctx: Mapping[str, Any],
        *,
        n: int = 1,
        max_tokens: int | None = None,
        stream: StreamCallback | None = None,
        mode: str | None = None,
        blob_reader: BlobReader | None = None,
        served: int | None = None,
    ) -> list[Completion]:
        if choose_mode(mode, with_defaults(ctx, self.spec)["options"], self.spec) != "chat":
            raise InvalidInput(
                "mode", "Anthropic has no completion mode; use an OpenAI-compatible or local model"
            )
        body = self.request(ctx, max_tokens=max_tokens, blob_reader=blob_reader, served=served)
        options = with_defaults(ctx, self.spec)["options"]
        betas = options.get("anthropic_beta")
        if served is not None and not forwarded(options):  # a beta may cost more: over
            betas = self.spec.params.get("anthropic_beta")  # HTTP the operator's only
        headers = {"anthropic-beta": ",".join(map(str, betas))} if betas else None
        if forwarded(options):  # a recording proxy: the client's body, without the SDK
            if self._upstream is None:
                self._upstream = Upstream(self._sdk, self.spec)
            up, data = self._upstream, as_sent(body, options["anthropic"], ctx.get("forward"))

            def sent(index: int, callback: StreamCallback | None) -> Completion:
                return (up.stream(body, index, callback, headers, data) if callback
                        else up.once(body, headers, data))

            return run_alternatives(n, sent, stream, parallel=True)

        def one(index: int, callback: StreamCallback | None) -> Completion:
            if callback:
                return self._stream(body, index, callback, headers)
            return self._once(body, headers)

        return run_alternatives(n, one, stream, parallel=True)

    def _once(self, body: dict[str, Any], headers: dict[str, str] | None = None) -> Completion:
        clock = Stopwatch()
        try:
            message = self._sdk.messages.create(**sdk_kwargs(body, self._params),
                                                extra_headers=headers)
        except self._anthropic.AnthropicError as exc:
            raise sdk_error(self.spec.name, exc, self._anthropic, self.spec) from exc
        return completion(
            parse_anthropic_message(message, self.spec.name),
            self.spec,
            body,
            message.to_dict(),
            clock.ms(),
        )

    def _stream(self, body: dict[str, Any], index: int, callback: StreamCallback,
                headers: dict[str, str] | None = None) -> Completion:
        clock = Stopwatch()
        try:
            with self._sdk.messages.stream(**sdk_kwargs(body, self._params),
                                           extra_headers=headers) as events:
                try:
                    stopped = False
                    for event in guarded(events):
                        stopped = stopped or event.type == "message_stop"
                        if isinstance(callback, Sink):
                            _relay(event, index, callback)
                        elif event.type == "text" and event.text:
                            callback(index, event.text)
                    if not stopped:  # the connection closed before the message ended
                        raise StreamBroken(ConnectionError("the stream ended before message_stop"))
                    message = events.get_final_message()
                except StreamBroken as broken:
                    raise self._interrupted(events, body, clock, broken) from broken.cause
        except self._anthropic.AnthropicError as exc:
            raise sdk_error(self.spec.name, exc, self._anthropic, self.spec) from exc
        return completion(
            parse_anthropic_message(message, self.spec.name),
            self.spec,
            body,
            message.to_dict(),
            clock.ms(),
        )

    def _interrupted(
        self, events: Any, body: dict[str, Any], clock: Stopwatch, broken: StreamBroken
    ) -> ProviderError:
        try:
            snapshot = events.current_message_snapshot
            partial = [
                completion(
                    parse_anthropic_message(snapshot, self.spec.name),
                    self.spec,
                    body,
                    snapshot.to_dict(),
                    clock.ms(),
                    incomplete=True,
                )
            ]
        except Exception:  # noqa: BLE001 - no snapshot before message_start
            partial = []
        return provider_error(
            self.spec.name, f"stream interrupted: {broken.cause!r}", retryable=True, partial=partial
        )


#: an Anthropic stream's delta types -> the kind a Sink is given
_DELTAS = {"text_delta": ("text", "text"), "thinking_delta": ("thinking", "thinking"),
           "signature_delta": ("signature", "signature"),
           "input_json_delta": ("input_json", "partial_json")}


def _relay(event: Any, index: int, sink: Sink) -> None:
    """One raw event of an Anthropic stream to a Sink (its blocks in order)."""
    if event.type == "content_block_start":
        sink.open(index, event.content_block.to_dict())
    elif event.type == "content_block_delta":
        kind = _DELTAS.get(event.delta.type)
        if kind is not None:
            sink.delta(index, kind[0], getattr(event.delta, kind[1], "") or "")
    elif event.type == "content_block_stop":
        sink.close(index)


def client_for(
    spec: ModelSpec,
    *,
    environ: Mapping[str, str] | None = None,
    blob_reader: BlobReader | None = None,
) -> Client:
    """The client for a spec (the local model is loaded on first use, not here)."""
    if spec.kind == "openai":
        return OpenAIClient(spec, environ=environ, blob_reader=blob_reader)
    if spec.kind == "anthropic":
        return AnthropicClient(spec, environ=environ, blob_reader=blob_reader)
    if spec.kind == "local":
        from ..settings import Settings
        from .local import LocalClient

        # the thread count the settings read from the same environment
        return LocalClient(spec, Settings.from_environ(environ or {}).model_threads)
    raise InvalidInput("provider", f"unknown provider kind {spec.kind!r}")


Job = tuple[ModelSpec | Client, Mapping[str, Any]]


def _as_client(target: ModelSpec | Client, environ: Mapping[str, str] | None) -> Client:
    return client_for(target, environ=environ) if isinstance(target, ModelSpec) else target


def complete_many(
    specs_and_ctx: Sequence[Job],
    n: int = 1,
    *,
    max_tokens: int | None = None,
    stream: Callable[[int, int, str], None] | None = None,
    blob_reader: BlobReader | None = None,
    environ: Mapping[str, str] | None = None,
    return_exceptions: bool = False,
    mode: str | None = None,
    served: int | None = None,
) -> list[list[Completion] | LoomError]:
    """Ask several models at once, one thread each; results in the order given.

    `stream(job, index, delta)` gets every job's text as it arrives (never two calls at
    once); `mode` ("chat" / "completion") applies to every job. The local model is serialized by its own lock, so local jobs queue up while
    remote ones proceed. `served` (a caller over HTTP: see `Client.complete`) holds
    every body to the allow-list. With `return_exceptions`, a failed job's entry is its LoomError
    (a ProviderError keeps its `partial`); otherwise the first failure (in order) is
    raised after every job has finished.
    """
    env = environ or {}
    token_limit(max_tokens)
    callback = locked_callback(stream) if stream else None

    def job(number: int, item: Job) -> list[Completion]:
        target, ctx = item
        relay = (lambda i, d: callback(number, i, d)) if callback else None
        return _as_client(target, env).complete(
            ctx, n=n, max_tokens=max_tokens, stream=relay, blob_reader=blob_reader, mode=mode,
            served=served)

    with ThreadPoolExecutor(max_workers=max(1, len(specs_and_ctx))) as pool:
        futures = [pool.submit(job, number, item) for number, item in enumerate(specs_and_ctx)]
    results: list[list[Completion] | LoomError] = []
    for future in futures:
        exc = future.exception()
        if exc is None:
            results.append(future.result())
        elif return_exceptions and isinstance(exc, LoomError):
            results.append(exc)
        else:
            raise exc
    return results
