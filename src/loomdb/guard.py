"""What every HTTP edge refuses before a route runs: the trust of the request itself.

A store without users is served on loopback with no token, so the browser of its
operator is the caller to distrust: any page it opens can send requests there. The
rules, applied by `Guard` (an ASGI middleware) to the API, the web page and the
OpenAI-compatible gateway alike:

* **Trusted hosts.** The `Host` header must name the server: a loopback name, the
  address it was told to bind, or a name the operator allowed (`loomdb serve
  --allow-host NAME`, `$LOOMDB_ALLOW_HOSTS`). A page whose DNS name rebinds to
  127.0.0.1 sends its own name, and is refused (400).
* **Same origin for writes.** A POST, PUT, PATCH or DELETE whose `Origin` (or
  `Sec-Fetch-Site`) says it comes from another site is refused (403). Clients that
  are not browsers send no `Origin`, and pass.
* **Nothing a form can send.** An HTML form posts `application/x-www-form-urlencoded`,
  `multipart/form-data` or `text/plain` without asking anyone; every state-changing
  request here must be `application/json` (or carry no body and no type), and an
  upload `application/octet-stream` (415 otherwise), which a page of another site can only send after a CORS preflight
  that this server never grants.
* **Bounded bodies.** A JSON body over `limits.request_body`, an upload over
  `limits.upload` (declared by `Content-Length` or found while reading), is refused
  with 413 before it is stored; a JSON body nested deeper than `limits.json_depth` is
  refused with 400 before any parser builds it (the gateway's routes, which parse
  their bodies themselves, as they parse: `SELF_CHECKED`).
* **Browser headers** on every answer: a Content-Security-Policy (scripts, styles and
  connections from this server only, no inline script, no framing), `nosniff`, and
  `Referrer-Policy: no-referrer`.

Every refusal is one line, `{"error": {"type", "message"}}`, and nothing is written.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import InvalidInput
from .jsondepth import TooDeep, check_text
from .limits import DEFAULT, Limits

if TYPE_CHECKING:
    from .settings import Settings

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: names that always reach a server on this machine
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
#: addresses that bind every interface: they name no host to trust
ANY_ADDRESS = frozenset({"0.0.0.0", "::", ""})
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
JSON_TYPE = "application/json"
UPLOAD_TYPE = "application/octet-stream"

#: the headers every answer carries (the page and /docs load only this server's files)
SECURITY_HEADERS = (
    (b"content-security-policy",
     b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:;"
     b" media-src 'self' data: blob:; connect-src 'self'; object-src 'none';"
     b" base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
)


#: the model gateway's routes: each reads its JSON body itself (`loomdb.gateway.body`),
#: measuring the depth as the stdlib's parser builds it (which stops at its recursion
#: limit), so the bytes of a whole re-sent history are not scanned twice per call
SELF_CHECKED = frozenset({"/v1/chat/completions", "/v1/responses", "/v1/messages",
                          "/v1/messages/count_tokens", "/v1/completions"})


@dataclass(frozen=True)
class Trust:
    """Which hosts a server answers to, what it takes, and which paths take uploads."""

    hosts: frozenset[str] = LOOPBACK_HOSTS
    limits: Limits = DEFAULT
    #: paths that take a raw upload (`application/octet-stream`, up to `limits.upload`)
    uploads: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def serving(cls, bind: str | None = None, allow: Iterable[str] = (), *,
                limits: Limits = DEFAULT, uploads: Iterable[str] = ()) -> Trust:
        """The loopback names, the address bound (unless it binds every interface) and
        the names the operator allowed (`*`: any host, for a proxy that checks them)."""
        hosts = set(LOOPBACK_HOSTS)
        if bind is not None and bind.strip("[]") not in ANY_ADDRESS:
            hosts.add(bind.strip("[]").lower())
        hosts.update(h.strip().strip("[]").lower() for h in allow if h.strip())
        return cls(frozenset(hosts), limits, frozenset(uploads))

    @classmethod
    def configured(cls, bind: str, allow: Iterable[str], settings: Settings,
                   limits: Limits, *, users: bool) -> Trust:
        """What a server started by `loomdb serve` / `loomdb gateway` trusts: `serving`
        with the settings' host names (`$LOOMDB_ALLOW_HOSTS`, comma- or space-separated)
        added, and `limits` with every `$LOOMDB_LIMIT_<NAME>` applied (read once, at start).

        A store without `users` answers loopback clients with no token, and behind a
        reverse proxy every request comes from loopback: a name allowed there would
        open the store to anyone who reaches the proxy, so one is refused, as a
        non-loopback `--host` is."""
        allow = list(allow)
        if not users and (allow or settings.allow_hosts):
            where = "--allow-host" if allow else "$LOOMDB_ALLOW_HOSTS"
            raise InvalidInput(where, "this store has no users, so it answers loopback "
                               "without a token and a proxy in front would open it to "
                               "anyone: add a user first (`loomdb user add NAME`)")
        return cls.serving(bind, [*allow, *settings.allow_hosts],
                           limits=settings.limits(limits))




class Refused(Exception):
    """A request refused at the edge: its status and one line."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message


class Guard:
    """The ASGI middleware applying `Trust` (see the module docstring)."""

    def __init__(self, app: ASGIApp, trust: Trust) -> None:
        self.app = app
        self.trust = trust

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                have = {k.lower() for k, _ in message.get("headers", ())}
                message["headers"] = list(message.get("headers", ())) + [
                    (k, v) for k, v in SECURITY_HEADERS if k not in have]
            await send(message)

        body = _Tracked(receive)
        try:
            admitted = await self._admit(scope, body.receive)
            await self.app(scope, admitted, send_with_headers)
        except Refused as no:
            if started:
                raise
            await refuse(send_with_headers, no, openai=scope["path"].startswith("/v1/"),
                         unread=None if body.done else body.receive)

    async def _admit(self, scope: Scope, receive: Receive) -> Receive:
        """Check the request; returns how the app is to read its body."""
        headers = _headers(scope)
        host = headers.get("host", "")
        if "*" not in self.trust.hosts and host_name(host) not in self.trust.hosts:
            raise Refused(400, "UntrustedHost",
                          f"Host {host[:100]!r} is not a name of this server (allow it with "
                          "`loomdb serve --allow-host NAME` or $LOOMDB_ALLOW_HOSTS)")
        method = scope["method"]
        if method not in WRITES:
            return receive
        origin = headers.get("origin")
        if origin is not None and not same_origin(origin, host):
            raise Refused(403, "CrossSite",
                          f"a {method} from origin {origin[:100]!r} is refused: "
                          "this server takes writes from its own pages only")
        if headers.get("sec-fetch-site") == "cross-site":
            raise Refused(403, "CrossSite", f"a cross-site {method} is refused")
        if method == "DELETE":
            return receive
        upload = scope["path"] in self.trust.uploads
        wanted = UPLOAD_TYPE if upload else JSON_TYPE
        kind = headers.get("content-type", "").partition(";")[0].strip().lower()
        limit = self.trust.limits.upload if upload else self.trust.limits.request_body
        if not kind and not upload:  # no body at all (a form always names its type)
            if await read_all(receive, limit):
                raise Refused(415, "UnsupportedMediaType",
                              f"a body needs Content-Type: {wanted}")
            return replay(b"", receive)
        if kind != wanted:
            raise Refused(415, "UnsupportedMediaType",
                          f"send the body as Content-Type: {wanted} (got {kind or 'none'})")
        declared = headers.get("content-length")
        if declared is not None:
            if not declared.strip().isdigit():
                raise Refused(400, "InvalidInput", "Content-Length is not a number")
            if int(declared) > limit:
                raise Refused(413, "TooLarge", too_large(upload, limit))
        if upload:
            return counted(receive, limit)
        body = await read_all(receive, limit)
        if scope["path"] not in SELF_CHECKED and too_deep(body, self.trust.limits.json_depth):
            raise Refused(400, "InvalidInput", f"body: JSON nested deeper than "
                          f"{self.trust.limits.json_depth} levels (LOOMDB_LIMIT_JSON_DEPTH)")
        return replay(body, receive)


def too_large(upload: bool, limit: int) -> str:
    what, var = ("an upload", "UPLOAD") if upload else ("a request body", "REQUEST_BODY")
    return f"{what} may hold {limit} bytes at most (LOOMDB_LIMIT_{var})"


async def refuse(send: Send, no: Refused, *, openai: bool = False,
                 unread: Receive | None = None) -> None:
    """The refusal, in the API's error shape, or OpenAI's on the gateway's `/v1`. When
    the client is still sending (`unread`: a body over the limit), the answer goes out
    first and the rest of the body is then read and dropped (`drain`) before the
    connection closes: closed with bytes unread, the system resets it, and a client
    still sending sees the reset instead of the refusal."""
    error: dict[str, Any] = {"type": no.kind, "message": no.message}
    if openai:
        error = {"message": no.message, "type": "invalid_request_error", "param": None,
                 "code": no.kind}
    body = json.dumps({"error": error}).encode()
    await send({"type": "http.response.start", "status": no.status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    if unread is None:
        await send({"type": "http.response.body", "body": body})
        return
    await send({"type": "http.response.body", "body": body, "more_body": True})
    await drain(unread)
    await send({"type": "http.response.body", "body": b""})


#: what is read and dropped of a refused body before the connection closes anyway
DRAIN_BYTES = 256 * 1024 * 1024
DRAIN_SECONDS = 30.0


async def drain(receive: Receive, most: int = DRAIN_BYTES,
                seconds: float = DRAIN_SECONDS) -> None:
    """Read and drop the rest of a request body, up to `most` bytes or `seconds`."""
    import asyncio
    import time

    deadline, size = time.monotonic() + seconds, 0
    while size <= most:
        left = deadline - time.monotonic()
        if left <= 0:
            return
        try:
            message = await asyncio.wait_for(receive(), left)
        except (TimeoutError, Refused):
            return
        if message["type"] != "http.request" or not message.get("more_body", False):
            return
        size += len(message.get("body", b""))


class _Tracked:
    """A request's receive that knows whether the whole body has been read."""

    def __init__(self, receive: Receive) -> None:
        self._receive = receive
        self.done = False

    async def receive(self) -> Message:
        message = await self._receive()
        if message["type"] != "http.request" or not message.get("more_body", False):
            self.done = True
        return message


def _headers(scope: Scope) -> dict[str, str]:
    """The request's headers by lower-case name (the first of repeated ones)."""
    found: dict[str, str] = {}
    for k, v in scope.get("headers", ()):
        found.setdefault(k.decode("latin-1").lower(), v.decode("latin-1"))
    return found


def host_name(host: str) -> str:
    """`Host` without its port, lower case (`[::1]:8000` -> `::1`)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    name, sep, port = host.rpartition(":")
    return name if sep and port.isdigit() and ":" not in name else host


def same_origin(origin: str, host: str) -> bool:
    """Whether `Origin` names this server as the request reached it (`Host`)."""
    scheme, sep, rest = origin.strip().lower().partition("://")
    if not sep or scheme not in ("http", "https") or not host:
        return False  # `null` (a sandboxed page, a file) and anything odd
    return rest.rstrip("/") == host.strip().lower()


async def read_all(receive: Receive, limit: int) -> bytes:
    """The whole body, refused once it passes `limit` bytes."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise Refused(413, "TooLarge", too_large(False, limit))
        parts.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(parts)


def replay(body: bytes, receive: Receive) -> Receive:
    """A receive that gives the body read once, then waits on the client (disconnect)."""
    sent = False

    async def again() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again


def counted(receive: Receive, limit: int) -> Receive:
    """A receive that refuses a streamed body once it passes `limit` bytes."""
    size = 0

    async def count() -> Message:
        nonlocal size
        message = await receive()
        if message["type"] == "http.request":
            size += len(message.get("body", b""))
            if size > limit:
                raise Refused(413, "TooLarge", too_large(True, limit))
        return message

    return count


def too_deep(raw: bytes, limit: int) -> bool:
    """Whether JSON text nests arrays and objects deeper than `limit`, read from its
    brackets outside strings (`loomdb.jsondepth`: no value is built; a body with no more
    opening brackets than the limit is not even scanned)."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    try:
        check_text(raw, limit)
    except TooDeep:
        return True
    return False
