"""What the app holds between requests: the Loom, its runtime, who is asking.

One Loom serves every worker thread (the store gives each thread its own connection
and binds each transaction to its thread), so requests run side by side; only the
in-process model is called one request at a time (the runtime's lock). A route asks
for the caller's `Door` (`loomdb.front`): every operation there acts for that caller.
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable

from fastapi import Depends, Request

from ..api import Loom
from ..front import Access, Door, Runtime
from ..front.users import any_users, caller, operator
from .errors import Unauthorized
from .live import Streams


class ServerState:
    """The Loom served, the runtime its callers' operations run under, and who may use it."""

    def __init__(self, loom: Loom, *, owned: bool, runtime: Runtime | None = None) -> None:
        self.loom = loom
        #: HTTP callers may name only the served models, within the guard's limits
        self.runtime = runtime or loom.runtime.serving()
        #: what callers may send (the guard's limits: the store's, or the operator's)
        self.limits = self.runtime.limits or loom.limits
        self.owned = owned  # opened by the app from a URL: closed when it stops
        self._users_seen = False
        #: the open live-update streams (`loomdb.server.live`)
        self.streams = Streams()
        self._no_users_until = 0.0

    def has_users(self, *, fresh: bool = False) -> bool:
        """Whether the store has users. Once seen, always (the safe direction); "none" is
        trusted for a second, so `loomdb user add` takes effect within one, and at once
        for a caller presenting a token (`fresh`: a user made a moment ago is never
        served as the operator)."""
        if self._users_seen:
            return True
        now = time.monotonic()
        if now < self._no_users_until and not fresh:
            return False
        self._users_seen = any_users(self.loom)
        self._no_users_until = now + 1.0
        return self._users_seen

    def access_for(self, authorization: str | None, client: str | None) -> Access:
        """The caller's view of the store: everyone's (no users, loopback only) or one user's."""
        if not self.has_users(fresh=bool(authorization)):
            if not is_loopback(client):
                raise Unauthorized("this store has no users: it is served on loopback only")
            return operator(self.loom)
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized("send Authorization: Bearer <token> (see `loomdb user add`)")
        who = caller(self.loom, token.strip())
        if who is None:
            raise Unauthorized("unknown token")
        return who


def is_loopback(host: str | None) -> bool:
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def state_of(request: Request) -> ServerState:
    state: ServerState = request.app.state.loomdb
    return state


def single_user(request: Request, why: str) -> Access:
    """The caller's Access for what is served only where the store is one person's (no
    users, loopback clients): a store with users refuses it, saying `why`."""
    state = state_of(request)
    if state.has_users():
        raise Unauthorized(why)
    return state.access_for(None, request.client.host if request.client else None)


def access(request: Request) -> Access:
    """Dependency: the caller's Access (401 when the store has users and no good token).

    Synchronous like the routes: measured under load, running it (or the append route)
    on the event loop starved the other connections and cut concurrent throughput."""
    client = request.client.host if request.client else None
    return state_of(request).access_for(request.headers.get("authorization"), client)


def door(request: Request, who: Access = Depends(access)) -> Door:
    """Dependency: every operation acting for the caller, under the app's runtime."""
    state = state_of(request)
    return state.loom.as_(who, runtime=state.runtime)


def caller_key(me: Door) -> str:
    """Whom a caller's open streams are counted against."""
    user = me.caller.user
    return f"user:{user.id}" if user is not None else "operator"


def operator_door(why: str) -> Callable[[Request], Door]:
    """Dependency for what only the operator does (a garbage collection sees every
    user's things): the operator's door where the store is one person's, else refused
    without asking for a token, saying `why`."""
    def operator(request: Request) -> Door:
        state = state_of(request)
        return state.loom.as_(single_user(request, why), runtime=state.runtime)

    return operator
