"""The gateway's operations (`door.gateway(clients)`): one call per endpoint, each
parsing the request in its wire's shapes, asking the model and recording the exchange
in the store (`loomdb.exchanges`), so the HTTP handlers (`loomdb.gateway.app`) are
that call plus moving bytes. The gateway has no users of its own: it is the operator's,
and it serves stores without users only. It takes no token, so on a store with users
any local process would read another user's path through a `previous_response_id` or a
matched history and write the answer into that user's tree; every operation checks it
here, so every edge (`loomdb gateway`, `create_gateway_app`, the `/v1` of `serve`)
refuses alike, also when the first user is added while it serves.

A wire is named by its `exchanges.wires` name (`openai-chat`, `openai-responses`,
`anthropic-messages`). One object serves every request of a router: it keeps the model
clients it made and the lock that serializes recording in this process."""

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
    """Answers (whole or streamed) on every wire, buffer completions, models."""

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

    def models(self, wire: str = "openai-chat") -> dict[str, Any]:
        """The served models as `GET /v1/models` lists them in the wire's shape."""
        specs = self._gw.models()
        if wire == "anthropic-messages":
            from ..exchanges.anthropic_messages import models

            return models(specs)
        return {"object": "list", "data": [
            {"id": spec.name, "object": "model", "created": 0, "owned_by": spec.kind}
            for spec in specs]}

    def parse(self, wire: str, body: Any, **extra: Any) -> Exchange:
        """A request in `wire`'s shape, parsed (a bad request fails here, before the
        model is asked or any byte of a stream is sent)."""
        from ..errors import InvalidInput
        from ..exchanges.wires import wire as module

        if not isinstance(body, dict):
            raise InvalidInput("body", "must be a JSON object")
        return module(wire).parse(self._gw, body, **extra)  # type: ignore[no-any-return]

    def answer(self, wire: str, ex: Exchange, session: str | None) -> dict[str, Any]:
        """Ask, record, and answer in the wire's shape."""
        from ..exchanges.wires import wire as module

        return module(wire).answer(ex, self._gw.run(ex, session))  # type: ignore[no-any-return]

    def stream(self, wire: str, ex: Exchange, session: str | None,
               emit: Callable[[dict[str, Any]], None]) -> None:
        """Ask with each of the wire's chunks to `emit` as the model writes, then record
        (the closing chunks after the commit). A failure raises, nothing recorded."""
        from ..exchanges.wires import wire as module

        chunks = module(wire).Chunks(ex)

        def relay(event: Any) -> None:
            for chunk in chunks.take(event):
                emit(chunk)

        self._gw.stream(ex, session, relay)

    def chat(self, body: Any, session: str | None) -> dict[str, Any]:
        """One chat completion: parsed, asked, recorded; the chat.completion body."""
        return self.answer("openai-chat", self.parse("openai-chat", body), session)

    def respond(self, body: Any, session: str | None) -> dict[str, Any]:
        """One Responses API call, recorded (see `exchanges.responses`)."""
        return self.answer("openai-responses", self.parse("openai-responses", body), session)

    def count_tokens(self, body: Any) -> dict[str, int]:
        """`POST /v1/messages/count_tokens` (see `exchanges.anthropic_messages`)."""
        from ..errors import InvalidInput
        from ..exchanges.anthropic_messages import count_tokens

        if not isinstance(body, dict):
            raise InvalidInput("body", "must be a JSON object")
        return count_tokens(self._gw, body)

    def complete(self, body: Any, session: str | None) -> dict[str, Any]:
        """One completions call on a buffer tree (see `exchanges.buffers`)."""
        from ..exchanges.buffers import complete

        return complete(self._gw, body, session)


__all__ = ["ClientFactory", "Gateway"]
