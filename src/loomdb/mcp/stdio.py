"""`loomdb mcp` over stdio: the handshake at once, the SDK and the store at the first call.

Importing the `mcp` SDK takes over a second (its protocol types are pydantic models,
built at import), and an agent's client may not wait that long: Claude Code in `-p`
mode sends its first request with the tools of the servers that have answered by then.
So the server answers what a client asks first, `initialize`, `ping` and the listings
(`Handshake`), from `catalog` alone, without the SDK and without opening the store, and
hands the connection to the SDK's server when anything else arrives: a tool call, a
resource read, a message it does not know or cannot answer exactly as the SDK would.
The SDK is then given the client's `initialize` (and `notifications/initialized`)
again, then that message and the rest of the input; its second answer to `initialize`
is dropped, so the client sees each of its requests answered once. The store opens at
the first call that needs it (`Opened`). `benchmarks/bench_mcp.py` measures the start;
`tests/agents/test_mcp_start.py` holds every early answer to the SDK's own.

As the SDK's own stdio transport does, the server keeps the wire (fds 0 and 1) to
itself while it serves: fd 0 reads the null device and fd 1 writes to stderr, so
nothing else in the process (a model, a program a tool runs) reads the client's
messages or writes into the answers.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import IO, TYPE_CHECKING, Any, cast

from ..errors import MissingExtra
from . import catalog
from .catalog import Tool

if TYPE_CHECKING:
    from ..api import Loom
    from ..front import Door, Runtime

#: the listing requests answered early, with no params or only a `cursor`
LISTINGS = ("tools/list", "resources/list", "resources/templates/list", "prompts/list")


class Opened:
    """The operator's door, opened at the first call (by whichever thread the SDK runs
    it on; a lock keeps two first calls from opening the store twice). A store that
    fails to open fails that call, through the error mapper, and the next call tries
    again."""

    def __init__(self, store: Callable[[], tuple[Loom, Runtime | None]]) -> None:
        self._store = store
        self._door: Door | None = None
        self._lock = threading.Lock()

    def __call__(self) -> Door:
        with self._lock:
            if self._door is None:
                loom, runtime = self._store()
                self._door = loom.as_(loom.operator, runtime=runtime)
            return self._door


class Handshake:
    """The answers given before the SDK is loaded, and what the SDK must be told again.

    `take` answers a line the way the SDK's server would, or returns None when the SDK
    must answer it: anything but a well-formed `initialize` (once), `ping`, a listing
    without params (or with a `cursor`: the lists are not paged) after `initialize`,
    and notifications after `initialize` (dropped, as the SDK drops those it has no
    handler for; `notifications/initialized` is kept to be told again)."""

    def __init__(self, tools: Mapping[str, Tool]) -> None:
        self.listings = catalog.listings(tools)
        #: the id of the `initialize` answered here (None before)
        self.started: int | str | None = None
        #: the lines the SDK is given first when it takes over
        self.opening: list[bytes] = []

    def take(self, line: bytes) -> list[bytes] | None:
        """The answer lines to write for `line` (none for a notification), or None."""
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
            return None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return None
        method, params = message.get("method"), message.get("params")
        if not isinstance(method, str):
            return None  # a response: the server asked nothing yet
        if "id" not in message:
            if self.started is None:
                return None
            if method == "notifications/initialized":
                self.opening.append(line)
            return []
        rid = message["id"]
        if isinstance(rid, bool) or not isinstance(rid, int | str):
            return None
        if method == "initialize":
            if self.started is not None or not _fits_initialize(params):
                return None
            self.started = rid
            self.opening.append(line)
            version = cast(dict[str, Any], params)["protocolVersion"]
            return [_answer(rid, catalog.initialized(version))]
        if method == "ping" and params in (None, {}):
            return [_answer(rid, {})]
        if self.started is None or method not in LISTINGS:
            return None
        if params is None or (isinstance(params, dict) and set(params) <= {"cursor"}
                              and isinstance(params.get("cursor", ""), str)):
            return [_answer(rid, self.listings[method])]
        return None


def _fits_initialize(params: Any) -> bool:
    """Whether `initialize` params are the plain handshake the SDK accepts (anything
    else, a `_meta` envelope included, is the SDK's to answer)."""
    if not isinstance(params, dict) or "_meta" in params:
        return False
    client = params.get("clientInfo")
    return (isinstance(params.get("protocolVersion"), str)
            and isinstance(params.get("capabilities"), dict) and isinstance(client, dict)
            and isinstance(client.get("name"), str) and isinstance(client.get("version"), str))


def _answer(rid: int | str, result: dict[str, Any]) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}, ensure_ascii=False,
                       separators=(",", ":")) + "\n").encode()


def serve(store: Callable[[], tuple[Loom, Runtime | None]]) -> None:
    """Serve over stdio until the client closes the connection; `store` opens the
    store and the runtime its agents run under when the first call needs them."""
    if importlib.util.find_spec("mcp") is None:
        raise MissingExtra("the MCP server", "mcp")
    from .server import offered

    me = Opened(store)
    tools = offered(me)
    handshake = Handshake(tools)
    with _wire() as (reader, writer):
        while line := reader.readline():
            if not line.strip():
                continue
            answers = handshake.take(line)
            if answers is None:
                _hand_over(me, tools, [*handshake.opening, line], handshake.started,
                           reader, writer)
                return
            for answer in answers:
                writer.write(answer)
            writer.flush()


@contextlib.contextmanager
def _wire() -> Iterator[tuple[IO[bytes], IO[bytes]]]:
    """The client's input and output, on descriptors of their own; fds 0 and 1 read the
    null device and write to stderr meanwhile, and are put back after."""
    _flush_stdout()
    saved_in, saved_out = os.dup(0), os.dup(1)
    quiet = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(quiet, 0)
        os.dup2(2, 1)
        with os.fdopen(os.dup(saved_in), "rb") as reader, \
                os.fdopen(os.dup(saved_out), "wb") as writer:
            yield reader, writer
    finally:
        _flush_stdout()  # what was printed meanwhile goes to stderr, not the wire
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        for fd in (quiet, saved_in, saved_out):
            os.close(fd)


def _flush_stdout() -> None:
    if sys.stdout is not None:
        sys.stdout.flush()


def _hand_over(me: Opened, tools: Mapping[str, Tool], opening: list[bytes],
               started: int | str | None, reader: IO[bytes], writer: IO[bytes]) -> None:
    """Load the SDK and let its server serve the connection from `opening` on."""
    import anyio

    async def lines() -> AsyncIterator[str]:
        for told in opening:
            yield told.decode("utf-8", "replace")
        async for line in anyio.wrap_file(io.TextIOWrapper(reader, encoding="utf-8",
                                                           errors="replace")):
            yield line

    anyio.run(run_sdk, me, tools, lines(), _Answers(writer, started))


async def run_sdk(me: Callable[[], Door], tools: Mapping[str, Tool],
                  lines: AsyncIterator[str], out: Any) -> None:
    """The SDK's server serving `lines` (JSON-RPC messages, one a line) until they end,
    writing to `out` (`async write(text)` and `flush()`)."""
    from mcp.server.stdio import stdio_server

    from .server import build

    # the SDK's own in-memory client reaches the low-level server the same way
    # (mcp/client/_memory.py), until it has a public name
    lowlevel = build(me, tools)._lowlevel_server
    async with stdio_server(cast(Any, lines), cast(Any, out)) as (read, write):
        await lowlevel.run(read, write, lowlevel.create_initialization_options())


class _Answers:
    """The SDK's output to the client, less its answer to the `initialize` that was
    answered before it took over."""

    def __init__(self, out: IO[bytes], answered: int | str | None) -> None:
        self.out = out
        self.answered = answered

    async def write(self, text: str) -> None:
        import anyio

        if self.answered is not None and self._repeats_initialize(text):
            self.answered = None
            return
        await anyio.to_thread.run_sync(self.out.write, text.encode())

    async def flush(self) -> None:
        import anyio

        await anyio.to_thread.run_sync(self.out.flush)

    def _repeats_initialize(self, text: str) -> bool:
        message = json.loads(text)
        if not isinstance(message, dict) or message.get("id") != self.answered:
            return False
        if "error" in message:  # the client was told yes: say so where it can be seen
            import logging

            logging.getLogger(__name__).warning(
                "the SDK refused an initialize answered at start: %s", message["error"])
        return "result" in message or "error" in message


__all__ = ["LISTINGS", "Handshake", "Opened", "run_sdk", "serve"]
