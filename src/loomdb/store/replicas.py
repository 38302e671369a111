"""Reads from hot standbys: which server a read outside a write goes to.

A PostgreSQL store URL may name standbys of its primary:

    postgresql://USER@PRIMARY:5432/DB?replicas=HOST2:5432,HOST3:5432&max_lag_ms=1000

Writes, compare-and-swap and everything inside a write transaction run on the primary.
A read outside one (context, path, children, leaves, trees, export, search) asks
`Router.read`, the one place that picks a server:

* **Read-your-writes.** After each commit the backend records the primary's WAL insert
  position (`note_write`). A standby serves a read only once its replayed position
  (`pg_last_wal_replay_lsn()`) has reached the highest one recorded; the router waits
  up to `replica_wait_ms` for one to catch up, else reads from the primary. Positions
  are recorded per primary server for the whole process, not per handle: what any
  handle in this process committed is seen by every later read of every handle on
  that server, as with one server (two handles are two users of one store, and a
  user who saw a write go through expects the next read anywhere to show it). Another
  process's commits are seen once a standby replays them (within `max_lag_ms`).
* **Lag bound.** A standby whose replay lags more than `max_lag_ms` behind what it has
  received is skipped until its next probe.
* **Faults.** A standby that refuses connections, drops one mid-read, was promoted (no
  longer in recovery) or cancels the read on a replay conflict is skipped for
  `_DOWN_S` seconds and the read runs elsewhere; the caller never sees the fault.

Each standby has a small pool of autocommit connections of its own (`StandbyPool`),
opened on demand with a short connect timeout, so a dead standby costs one refused
connection per retry period and never blocks a read for long.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import unquote

from ..errors import InvalidInput

T = TypeVar("T")

#: URL options the router reads (stripped before the URL reaches libpq)
OPTIONS = ("replicas", "max_lag_ms", "replica_wait_ms")
#: how long a failed standby is left alone before it is tried again
_DOWN_S = 5.0
#: how long a standby's probed position and lag are trusted without a new probe
_PROBE_S = 0.1
#: pause between probes while waiting for a standby to replay this store's writes
_POLL_S = 0.002
#: seconds to wait for a standby to accept a connection
CONNECT_TIMEOUT = 2

_PROBE = (
    "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text,"
    " CASE WHEN pg_last_wal_receive_lsn() IS NULL"
    " OR pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0"
    " ELSE extract(epoch FROM now() - pg_last_xact_replay_timestamp()) * 1000 END"
)


def lsn(text: str | None) -> int:
    """A WAL position as PostgreSQL prints it (`16/B374D848`) -> an integer to compare."""
    if not text:
        return 0
    high, _, low = text.partition("/")
    return (int(high, 16) << 32) + int(low, 16)


@dataclass(frozen=True)
class ReplicaOptions:
    """The replica settings of a store URL."""

    hosts: tuple[tuple[str, int], ...] = ()
    max_lag_ms: float = 1000.0
    replica_wait_ms: float = 50.0


def parse_options(params: dict[str, str]) -> ReplicaOptions:
    """The router's settings from a URL's query parameters (InvalidInput when malformed)."""
    hosts: list[tuple[str, int]] = []
    for item in filter(None, unquote(params.get("replicas", "")).split(",")):
        host, _, port = item.strip().rpartition(":")
        if not host or not port.isdigit():
            raise InvalidInput("replicas", f"{item!r} is not HOST:PORT")
        hosts.append((host.strip("[]"), int(port)))
    numbers = {}
    for key, default in (("max_lag_ms", 1000.0), ("replica_wait_ms", 50.0)):
        raw = params.get(key)
        try:
            numbers[key] = default if raw is None else float(raw)
        except ValueError:
            raise InvalidInput(key, f"{raw!r} is not a number of milliseconds") from None
        if numbers[key] < 0:
            raise InvalidInput(key, "must not be negative")
    return ReplicaOptions(tuple(hosts), numbers["max_lag_ms"], numbers["replica_wait_ms"])


class StandbyPool:
    """Idle autocommit connections to one standby, opened when none is free."""

    def __init__(self, connect: Callable[[], Any], size: int) -> None:
        self._connect = connect
        self._size = size
        self._idle: list[Any] = []
        self._lock = threading.Lock()

    def get(self) -> Any:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return self._connect()

    def put(self, conn: Any) -> None:
        """Keep a healthy connection for the next read; close a broken one."""
        if not conn.closed and not conn.broken:
            with self._lock:
                if len(self._idle) < self._size:
                    self._idle.append(conn)
                    return
        conn.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


@dataclass
class Standby:
    """One standby and what its last probe said. Threads update it without a lock: a
    stale write can only make `replayed` older, which is the safe direction."""

    name: str
    pool: StandbyPool
    replayed: int = 0
    lag_ms: float = 0.0
    checked: float = 0.0
    down_until: float = 0.0


class WritePositions:
    """The highest WAL position committed from this process, per primary server."""

    def __init__(self) -> None:
        self._at: dict[str, int] = {}
        self._lock = threading.Lock()

    def note(self, server: str, at: int) -> None:
        with self._lock:
            if at > self._at.get(server, 0):
                self._at[server] = at

    def get(self, server: str) -> int:
        return self._at.get(server, 0)


#: shared by every router of the process (see Read-your-writes above)
WRITTEN = WritePositions()


class Router:
    """Picks the server for each read outside a write; see the module docstring.
    `primary` names the primary server (HOST:PORT) whose commits reads must see."""

    def __init__(self, options: ReplicaOptions, connect: Callable[[str, int], Any],
                 pool_size: int, skippable: tuple[type[BaseException], ...],
                 primary: str = "") -> None:
        self.options = options
        self.primary = primary
        self.standbys = [
            Standby(f"{h}:{p}", StandbyPool(lambda h=h, p=p: connect(h, p), pool_size))  # type: ignore[misc]
            for h, p in options.hosts
        ]
        #: errors after which a read moves on to another server
        self._skippable = skippable
        self._turn = itertools.count()
        #: reads served per server ("primary" or HOST:PORT), for tests and figures
        self.served: Counter[str] = Counter()

    @property
    def active(self) -> bool:
        return bool(self.standbys)

    def note_write(self, position: str | None) -> None:
        """Record a commit's WAL position: later reads need a standby that replayed it."""
        WRITTEN.note(self.primary, lsn(position))

    def read(self, work: Callable[[Any], T], primary: Callable[[Callable[[Any], T]], T]) -> T:
        """Run `work(conn)` on a fresh-enough standby, else through `primary(work)`."""
        need = WRITTEN.get(self.primary)
        deadline = time.monotonic() + self.options.replica_wait_ms / 1000
        start = next(self._turn)
        count = len(self.standbys)
        for i in range(count):
            standby = self.standbys[(start + i) % count]
            done, out = self._try(standby, work, need, deadline)
            if done:
                self.served[standby.name] += 1
                return out  # type: ignore[return-value]
        self.served["primary"] += 1
        return primary(work)

    def _try(self, standby: Standby, work: Callable[[Any], T], need: int,
             deadline: float) -> tuple[bool, T | None]:
        now = time.monotonic()
        if standby.down_until > now:
            return False, None
        conn = None
        try:
            conn = standby.pool.get()
            if not self._fresh(standby, conn, need, deadline):
                return False, None
            return True, work(conn)
        except self._skippable:
            standby.down_until = time.monotonic() + _DOWN_S
            return False, None
        finally:
            if conn is not None:
                standby.pool.put(conn)

    def _fresh(self, standby: Standby, conn: Any, need: int, deadline: float) -> bool:
        """Whether `standby` has replayed `need` and lags within bounds, probing (and
        waiting until `deadline` for it to catch up) when its last probe is too old or
        did not pass. A lag over the bound is waited out like a missing write: the lag
        is measured from the last transaction replayed, so a standby that was idle and
        is replaying a new write this instant looks as far behind as it was idle."""
        while True:
            now = time.monotonic()
            if not self._passes(standby, need) or now - standby.checked > _PROBE_S:
                recovering, replayed, lag = conn.execute(_PROBE).fetchone()
                if not recovering:  # promoted: no longer a copy of the primary
                    standby.down_until = now + _DOWN_S
                    return False
                standby.replayed, standby.lag_ms = lsn(replayed), float(lag or 0)
                standby.checked = now
            if self._passes(standby, need):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(_POLL_S)

    def _passes(self, standby: Standby, need: int) -> bool:
        return standby.replayed >= need and standby.lag_ms <= self.options.max_lag_ms

    def close(self) -> None:
        for standby in self.standbys:
            standby.pool.close()
