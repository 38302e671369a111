"""The OpenAI-compatible gateway's operations (`door.gateway(clients)`): one call per
endpoint, each parsing the request, asking the model and recording the exchange in the
store (`loomdb.exchanges`), so the HTTP handlers (`loomdb.gateway.app`) are that call
plus moving bytes. The gateway has no users of its own: it is the operator's, and it
serves stores without users only. It takes no token, so on a store with users any
local process would read another user's path through a `previous_response_id` or a
matched history and write the answer into that user's tree; every operation checks it
here, so every edge (`loomdb gateway`, `create_gateway_app`, the `/v1` of `serve`)
refuses alike, also when the first user is added while it serves.

One object serves every request of a router: it keeps the model clients it made and
the lock that serializes recording in this process."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import Unauthorized
from ..exchanges.exchange import ClientFactory
from .base import AreaDoor
from .users import any_users

if TYPE_CHECKING:
    from ..exchanges.exchange import Exchange
    from ..exchanges.exchange import Gateway as Service
    from .runtime import Runtime
    from .sight import Sight

_OPERATOR_ONLY = "the gateway is the operator's (it has no users of its own)"
_NO_USERS = ("the gateway serves stores without users only (it takes no token, and a "
             "store with users would be open through it to any local process)")


class Gateway(AreaDoor):
    """Chat completions (whole or streamed), responses, buffer completions, models."""

    def __init__(self, sight: Sight, runtime: Runtime,
                 clients: ClientFactory | None = None) -> None:
        from ..exchanges.exchange import Gateway as Service

        super().__init__(sight, runtime)
        self.sight.operator_only(_OPERATOR_ONLY)
        rt = runtime
        self._service = Service(self.loom, config=rt.config, environ=rt.environ,
                                clients=clients, limits=rt.limits)
        self._users_seen = False

    @property
    def _gw(self) -> Service:
        """The service, on a store without users only (Unauthorized otherwise). Asked on
        every call, since a user may be added while the gateway serves; once seen, the
        answer stays (the safe direction). A store that never had users is not given
        the users' tables by asking."""
        if not self._users_seen:
            self._users_seen = any_users(self.loom)
        if self._users_seen:
            raise Unauthorized(_NO_USERS)
        return self._service

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
