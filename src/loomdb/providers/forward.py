"""Anthropic's Messages API over a plain HTTP client: the recording proxy's upstream.

When the gateway is a recording proxy (an `anthropic` alias asked on the Anthropic
wire), the client's body goes upstream as it sent it, only `model` replaced: the very
bytes it sent, the model's name spliced in (`gateway.body.Source`), unless the model's
defaults added a field. The
anthropic SDK would walk, validate and copy every one of its messages on the way out and
build a typed object of every event on the way back: tens of milliseconds for a
2,000-message history, on the client's critical path. Here the body is encoded once by
the stdlib and posted by one `httpx` client made with the model's client (the SDK's
base URL and headers; kept, so connections are reused), and the
answer, or its event stream, is read as plain JSON:

- a whole answer is parsed as the SDK's `Message` would be (`parse_anthropic_message`
  takes its dict);
- a stream is relayed event by event as it arrives (to a `Sink`: blocks opening, their
  deltas, closing; or text only to a plain callback) while the final message is built
  from the events as the SDK's `get_final_message` builds it (a tool call's
  `input_json_delta` pieces parsed at its `content_block_stop`);
- failures are the ProviderErrors the SDK path gives (`clients.sdk_error`'s words):
  timeouts and unreachable servers retryable, HTTP 408/409/429/5xx retryable and retried
  up to the model's `max_retries` times before any byte is relayed, other statuses not;
  an `error` event or a stream closed before `message_stop` is an interrupted stream
  carrying the partial answer.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

from ..errors import ProviderError
from .base import Completion, Sink, Stopwatch, StreamCallback, completion, provider_error
from .config import ModelSpec
from .redact import shown_url
from .replies import parse_anthropic_message

#: longest provider error text kept in a ProviderError message
MAX_MESSAGE = 500
#: the upstream sockets' send buffer (the kernel may cap it: `net.core.wmem_max`)
SEND_BUFFER = 4 << 20
_RETRY = (408, 409, 429)
#: an Anthropic stream's delta types -> (the kind a Sink is given, the field, the block's)
_DELTAS = {"text_delta": ("text", "text"), "thinking_delta": ("thinking", "thinking"),
           "signature_delta": ("signature", "signature"),
           "input_json_delta": ("input_json", "partial_json")}


class Upstream:
    """`POST /v1/messages` of the SDK client `sdk`, without the SDK's request types."""

    def __init__(self, sdk: Any, spec: ModelSpec) -> None:
        import httpx

        self.spec = spec
        # pooled: connections are kept; a send buffer that holds a long history whole,
        # so the body is handed to the kernel at once rather than in pieces, each
        # waiting for the upstream to drain the last (on a busy machine, a wait each)
        self.http = httpx.Client(timeout=spec.timeout, transport=httpx.HTTPTransport(
            socket_options=[(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)]))
        self.url = str(sdk.base_url).rstrip("/") + "/v1/messages"
        self.headers = {k: v for k, v in sdk.default_headers.items() if isinstance(v, str)}
        self.timeout = spec.timeout

    def _post(self, data: bytes, headers: dict[str, str] | None, stream: bool) -> Any:
        """The upstream's response, its status 200 (retried as the SDK retries)."""
        import httpx

        sent = {**self.headers, **(headers or {})}
        for attempt in range(self.spec.max_retries + 1):
            last = attempt == self.spec.max_retries
            try:
                request = self.http.build_request("POST", self.url, content=data, headers=sent,
                                                  timeout=self.timeout)
                response = self.http.send(request, stream=stream)
            except httpx.TimeoutException:
                if last:
                    raise self._error(f"timed out after {self.spec.timeout:g}s waiting for "
                                      f"{shown_url(self.spec.base_url)}", True) from None
            except httpx.TransportError as exc:
                if last:
                    raise self._error(f"cannot reach {shown_url(self.spec.base_url)}: {exc}",
                                      True) from None
            else:
                if response.status_code == 200:
                    return response
                status, text = response.status_code, response.read().decode("utf-8", "replace")
                response.close()
                retry = status in _RETRY or status >= 500
                if last or not retry:
                    raise self._status(status, text, retry)
            time.sleep(min(0.5 * 2 ** attempt, 8.0))
        raise AssertionError("unreachable")  # pragma: no cover

    def _error(self, why: str, retryable: bool, partial: list[Completion] | None = None
               ) -> ProviderError:
        return provider_error(self.spec.name, why, retryable=retryable, partial=partial or [])

    def _status(self, status: int, text: str, retryable: bool) -> ProviderError:
        where = shown_url(self.spec.base_url)
        try:
            shown = json.dumps(json.loads(text)) if text else "(no body)"
        except ValueError:
            shown = text
        message = f"Error code: {status} - {shown}"[:MAX_MESSAGE]
        why = f"HTTP {status} from {where}: {message}"
        if status == 429:
            why = f"rate limited (HTTP 429) by {where}: {message}"
        elif status == 404:
            why += f" (is the model id {self.spec.model!r} right?)"
        err = self._error(why, retryable)
        err.status = status  # type: ignore[attr-defined]  # a gateway passes it on
        return err

    def once(self, body: dict[str, Any], headers: dict[str, str] | None,
             data: bytes | None = None) -> Completion:
        clock = Stopwatch()
        response = self._post(data or _encoded(body), headers, stream=False)
        try:
            raw = json.loads(response.content)
        except ValueError:
            raise self._error(f"malformed response: {response.text[:200]!r}", False) from None
        return completion(parse_anthropic_message(raw, self.spec.name), self.spec, body, raw,
                          clock.ms())

    def stream(self, body: dict[str, Any], index: int, callback: StreamCallback,
               headers: dict[str, str] | None, data: bytes | None = None) -> Completion:
        clock = Stopwatch()
        body = {**body, "stream": True}
        response = self._post(data or _encoded(body), headers, stream=True)
        built = _Built()
        try:
            for event in _events(response):
                built.take(event, index, callback)
        except _Failed as failed:
            raise self._error(f"stream interrupted: {failed.why}", True,
                              built.partial(self.spec, body, clock)) from None
        except Exception as exc:  # noqa: BLE001 - the transport broke mid-stream
            if isinstance(exc, ProviderError) or not _transport(exc):
                raise
            raise self._error(f"stream interrupted: {exc!r}", True,
                              built.partial(self.spec, body, clock)) from exc
        finally:
            response.close()
        if not built.stopped:
            raise self._error("stream interrupted: the stream ended before message_stop", True,
                              built.partial(self.spec, body, clock))
        return completion(parse_anthropic_message(built.message, self.spec.name), self.spec,
                          body, built.message, clock.ms())


def as_sent(body: dict[str, Any], given: Any, forward: Any) -> bytes | None:
    """`forward` (the client's own bytes, its `model` replaced) when the body built for
    upstream is exactly the client's fields (`given`, every value the very object the
    client sent) and that model: nothing added from the model's defaults. Else None
    (the body is encoded)."""
    if not isinstance(forward, bytes) or set(body) != set(given) | {"model"}:
        return None
    return forward if all(body[k] is v for k, v in given.items()) else None


def _encoded(body: dict[str, Any]) -> bytes:
    try:
        return json.dumps(body, ensure_ascii=False).encode()
    except UnicodeEncodeError:  # a lone surrogate the client escaped: sent escaped
        return json.dumps(body).encode()


def _transport(exc: BaseException) -> bool:
    import httpx

    return isinstance(exc, (httpx.HTTPError, httpx.StreamError, OSError, ValueError))


class _Failed(Exception):
    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def _events(response: Any) -> Iterator[dict[str, Any]]:
    """The `data:` of each server-sent event, as JSON."""
    for line in response.iter_lines():
        if line.startswith("data:"):
            data = json.loads(line[5:])
            if isinstance(data, dict):
                yield data


class _Built:
    """The final message, built from the stream's events as they are relayed."""

    def __init__(self) -> None:
        self.message: dict[str, Any] = {}
        self.blocks: list[dict[str, Any]] = []
        self.json: dict[int, str] = {}
        self.stopped = False

    def take(self, event: dict[str, Any], index: int, callback: StreamCallback) -> None:
        kind = event.get("type")
        sink = callback if isinstance(callback, Sink) else None
        if kind == "message_start":
            self.message = dict(event.get("message") or {})
            self.message["content"] = self.blocks
        elif kind == "content_block_start":
            block = dict(event.get("content_block") or {})
            self.blocks.append(block)
            if sink is not None:
                sink.open(index, dict(block))
        elif kind == "content_block_delta":
            self._delta(event, index, callback, sink)
        elif kind == "content_block_stop":
            at = self._at(event)
            if at in self.json:
                text = self.json.pop(at)
                self.blocks[at]["input"] = json.loads(text) if text.strip() else {}
            if sink is not None:
                sink.close(index)
        elif kind == "message_delta":
            self.message.update(event.get("delta") or {})
            usage = {**(self.message.get("usage") or {}), **(event.get("usage") or {})}
            self.message["usage"] = {k: v for k, v in usage.items() if v is not None}
        elif kind == "message_stop":
            self.stopped = True
        elif kind == "error":
            error = event.get("error") or {}
            raise _Failed(f"{error.get('type', 'error')}: {error.get('message', '')}"[:MAX_MESSAGE])

    def _at(self, event: dict[str, Any]) -> int:
        """The block an event names by its index (the last one opened, if it names none)."""
        at = event.get("index")
        return at if type(at) is int and 0 <= at < len(self.blocks) else len(self.blocks) - 1

    def _delta(self, event: dict[str, Any], index: int, callback: StreamCallback,
               sink: Sink | None) -> None:
        delta = event.get("delta") or {}
        known = _DELTAS.get(str(delta.get("type")))
        if known is None or not self.blocks:
            return
        kind, field = known
        piece = delta.get(field) or ""
        at = self._at(event)
        block = self.blocks[at]
        if kind == "input_json":
            self.json[at] = self.json.get(at, "") + piece
        elif kind == "signature":
            block["signature"] = piece
        else:
            block[kind] = (block.get(kind) or "") + piece
        if sink is not None:
            sink.delta(index, kind, piece)
        elif kind == "text" and piece:
            callback(index, piece)

    def partial(self, spec: ModelSpec, body: dict[str, Any], clock: Stopwatch
                ) -> list[Completion]:
        if not self.message:
            return []
        try:
            reply = parse_anthropic_message(self.message, spec.name)
        except ProviderError:
            return []
        return [completion(reply, spec, body, self.message, clock.ms(), incomplete=True)]
