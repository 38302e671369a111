"""Live updates: server-sent event streams that tell a page when what it shows changed.

A stream (`GET /api/trees/{tree}/events`, `GET /api/s/{token}/events`) compares a stamp
of what it follows (`loomdb.front.live`, `Shared.stamp`) with the last one it sent, and
sends `event: change` with the new stamp when they differ; the page then reads again
what it shows. The stamp is read:

* at once after any write this server answers (a POST, PUT, PATCH or DELETE: the
  `Writes` middleware wakes every stream when the answer has been sent, so after its
  transaction committed), and
* every `POLL` seconds otherwise, which brings the writes of other processes (the CLI,
  a library program, another server on the same store) on either backend, and those
  that reach a PostgreSQL hot standby by replication. A stamp is two indexed reads, so
  a poll per followed tree costs little; LISTEN/NOTIFY would need every writer of the
  core to notify, and a standby refuses LISTEN.

A stream is an ordinary GET: it passes the guard (trusted hosts; a GET needs no origin
check) and the CSP's `connect-src 'self'`. The page reads it with `fetch` rather than
`EventSource`, which cannot send the bearer token a store with users needs. Streams
are limited per caller and in all (`MAX_PER_CALLER`, `MAX_STREAMS`; one more is
refused with one line), and each ends after `LIFETIME` seconds (the page connects
again), so a forgotten tab holds nothing for long. A share link's streams count
against the link's maker (however many links they made), and, since whoever has the
link needs no token, against the client's address too (`MAX_PER_ADDRESS`). The last
`RESERVED` slots go only to a caller holding none yet, so no few callers can take
every slot from the others.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import InvalidInput, LoomError

#: seconds between two reads of a stamp when no write of this server woke the stream
POLL = 0.25
#: seconds a stream lasts before it ends (the page connects again)
LIFETIME = 600.0
#: seconds of quiet after which a comment line keeps proxies from closing the stream
KEEPALIVE = 15.0
MAX_PER_CALLER = 8
MAX_STREAMS = 64
#: streams one client address may hold through share links (which need no token)
MAX_PER_ADDRESS = 8
#: the share of the slots (the last quarter) kept for callers who hold no stream yet
RESERVED = MAX_STREAMS // 4
#: what the page waits before it connects again after a stream ended (milliseconds)
RETRY_MS = 1000
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class Streams:
    """The open streams of one app: counted per caller and in all, woken by writes.
    Used on the event loop only."""

    def __init__(self, per_caller: int = MAX_PER_CALLER, overall: int = MAX_STREAMS,
                 per_address: int = MAX_PER_ADDRESS, reserved: int | None = None) -> None:
        self.per_caller = per_caller
        self.overall = overall
        self.per_address = per_address
        self.reserved = overall // 4 if reserved is None else min(reserved, overall - 1)
        self.open: dict[str, int] = {}
        self.addresses: dict[str, int] = {}
        self.waiting: set[asyncio.Event] = set()

    def take(self, who: str, address: str | None = None) -> None:
        """Count one more stream for `who` (and, for a share link, the client's
        `address`), or refuse it in one line."""
        total, held = sum(self.open.values()), self.open.get(who, 0)
        if total >= self.overall:
            raise InvalidInput("live stream", f"the server has {self.overall} open already; "
                               "try again later")
        if held and total >= self.overall - self.reserved:
            raise InvalidInput("live stream", f"the server keeps its last {self.reserved} "
                               "for callers holding none: close another tab or view first")
        if held >= self.per_caller:
            raise InvalidInput("live stream", f"at most {self.per_caller} open at once per "
                               "caller: close another tab or view first")
        if address is not None and self.addresses.get(address, 0) >= self.per_address:
            raise InvalidInput("live stream", f"at most {self.per_address} shared links "
                               "followed at once from one address: close another first")
        self.open[who] = held + 1
        if address is not None:
            self.addresses[address] = self.addresses.get(address, 0) + 1

    def give_back(self, who: str, address: str | None = None) -> None:
        for counts, key in ((self.open, who), (self.addresses, address)):
            if key is None:
                continue
            left = counts.get(key, 0) - 1
            if left > 0:
                counts[key] = left
            else:
                counts.pop(key, None)

    def poke(self) -> None:
        """Something was written: every stream reads its stamp now."""
        for waiter in self.waiting:
            waiter.set()

    def stream(self, who: str, stamp: Callable[[], dict[str, Any]],
               first: dict[str, Any], address: str | None = None) -> StreamingResponse:
        """The response streaming changes of `stamp` (already read once: `first`) to a
        caller counted as `who` (and `address`, see `take`); refused when the limits
        are reached."""
        self.take(who, address)
        return StreamingResponse(self._events(who, stamp, first, address),
                                 media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store",
                                          "X-Accel-Buffering": "no"})

    async def _events(self, who: str, stamp: Callable[[], dict[str, Any]],
                      last: dict[str, Any], address: str | None) -> AsyncIterator[str]:
        woken = asyncio.Event()
        self.waiting.add(woken)
        try:
            yield f"retry: {RETRY_MS}\n" + _event("ready", last)
            start = quiet = time.monotonic()
            while time.monotonic() - start < LIFETIME:
                try:
                    await asyncio.wait_for(woken.wait(), POLL)
                except TimeoutError:
                    pass
                woken.clear()
                try:
                    now = await run_in_threadpool(stamp)
                except LoomError:  # gone, revoked, no longer the caller's
                    yield _event("gone", {})
                    return
                if now != last:
                    last = now
                    quiet = time.monotonic()
                    yield _event("change", now)
                elif time.monotonic() - quiet > KEEPALIVE:
                    quiet = time.monotonic()
                    yield ": still here\n\n"
        finally:
            self.waiting.discard(woken)
            self.give_back(who, address)


def _event(kind: str, data: dict[str, Any]) -> str:
    return f"event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


class Writes:
    """ASGI middleware: once the answer to a write has been sent, wake the streams."""

    def __init__(self, app: ASGIApp, streams: Streams) -> None:
        self.app = app
        self.streams = streams

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in WRITES:
            await self.app(scope, receive, send)
            return

        async def sent(message: Message) -> None:
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                self.streams.poke()

        await self.app(scope, receive, sent)


__all__ = ["LIFETIME", "MAX_PER_ADDRESS", "MAX_PER_CALLER", "MAX_STREAMS", "POLL", "RESERVED",
           "Streams", "Writes"]
