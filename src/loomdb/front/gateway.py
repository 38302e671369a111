"""The OpenAI-compatible gateway's operations (`door.gateway(clients)`): one call per
endpoint, each parsing the request, asking the model and recording the exchange in the
store (`loomdb.exchanges`), so the HTTP handlers (`loomdb.gateway.app`) are that call
plus moving bytes. The gateway has no users of its own: it is the operator's.

One object serves every request of a router: it keeps the model clients it made and
the lock that serializes recording in this process."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..exchanges.exchange import ClientFactory
from .base import AreaDoor

if TYPE_CHECKING:
    from ..exchanges.exchange import Exchange
    from .runtime import Runtime
    from .sight import Sight

_OPERATOR_ONLY = "the gateway is the operator's (it has no users of its own)"


class Gateway(AreaDoor):
    """Chat completions (whole or streamed), responses, buffer completions, models."""

    def __init__(self, sight: Sight, runtime: Runtime,
                 clients: ClientFactory | None = None) -> None:
        from ..exchanges.exchange import Gateway as Service

        super().__init__(sight, runtime)
        self.sight.operator_only(_OPERATOR_ONLY)
        rt = runtime
        self._gw = Service(self.loom, config=rt.config, environ=rt.environ, clients=clients,
                           limits=rt.limits)

    def models(self) -> list[dict[str, Any]]:
        """The served models as `/v1/models` lists them."""
        return [{"id": spec.name, "object": "model", "created": 0, "owned_by": spec.kind}
                for spec in self._gw.models()]

    def chat(self, body: Any, session: str | None) -> dict[str, Any]:
        """One chat completion: parsed, asked, recorded; the chat.completion body."""
        from ..exchanges.exchange import chat_response

        ex = self._gw.exchange(body)
        answers = self._gw.complete(ex)
        return chat_response(ex, answers, self._gw.record(ex, answers, session))

    def start_stream(self, body: Any) -> Exchange:
        """A streamed chat completion, parsed (a bad request fails here, before any
        byte is sent); `stream` runs it."""
        return self._gw.exchange(body)

    def stream(self, ex: Exchange, session: str | None,
               emit: Callable[[dict[str, Any]], None], usage_wanted: bool) -> None:
        """Ask the model, each chunk to `emit` as it comes, then record (see
        `exchanges.exchange.stream_chat`)."""
        from ..exchanges.exchange import stream_chat

        stream_chat(self._gw, ex, session, emit, usage_wanted)

    def respond(self, body: Any, session: str | None) -> dict[str, Any]:
        """One Responses API call, recorded (see `exchanges.responses`)."""
        from ..exchanges.responses import respond

        return respond(self._gw, body, session)

    def complete(self, body: Any, session: str | None) -> dict[str, Any]:
        """One completions call on a buffer tree (see `exchanges.buffers`)."""
        from ..exchanges.buffers import complete

        return complete(self._gw, body, session)


__all__ = ["ClientFactory", "Gateway"]
