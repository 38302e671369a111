"""The embedding worker: a thread that embeds new search entries behind the writes, in
batches, so a semantic query never waits for a backlog (it ranks what is embedded and
says how much is not yet). `loomdb serve`, `loomdb watch` and `loomdb gateway` run
one beside their store; a library user runs `with embedding_worker(loom): ...`.

It works only on a store that has the semantic area (made by the first semantic
query, whose migration queues every entry): a store that never asks by meaning never
loads the model. Each pass indexes new messages for full text, then embeds up to one
batch; when nothing waits it sleeps `interval` seconds (or until `wake`). An error (the
store busy, a missing extra) is logged once and retried after a longer pause; the
thread never takes its process down."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ...errors import MissingExtra
from . import SEMANTIC

if TYPE_CHECKING:
    from ...loom import Loom

log = logging.getLogger("loomdb.embedding")

#: seconds between looks at an idle store (a look is two index probes)
INTERVAL = 2.0
#: seconds before trying again after an error
BACKOFF = 30.0


class EmbeddingWorker:
    def __init__(self, loom: Loom, *, interval: float = INTERVAL, batch: int = 64) -> None:
        self.loom = loom
        self.interval = interval
        self.batch = batch
        self.embedded = 0
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def step(self) -> int:
        """One pass: up to one batch embedded; how many (0: nothing waits, or the
        store has no semantic area)."""
        from . import index as V

        if not self.loom.has_area(SEMANTIC):
            return 0
        done = V.embed_batch(self.loom, self.batch)
        self.embedded += done
        return done

    def drain(self) -> int:
        """Passes until nothing waits; how many were embedded."""
        done = 0
        while n := self.step():
            done += n
        return done

    def start(self) -> EmbeddingWorker:
        self._thread = threading.Thread(target=self._run, name="loomdb-embedding", daemon=True)
        self._thread.start()
        return self

    def wake(self) -> None:
        """Look now rather than at the end of the pause."""
        self._wake.set()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop after the batch in hand (its vectors are written)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        failed: str | None = None
        while not self._stop.is_set():
            try:
                busy = self.step() > 0
                failed = None
            except MissingExtra as exc:
                log.warning("loomdb: the embedding worker stops: %s", exc)
                return
            except Exception as exc:  # the store busy or gone: look again later
                if str(exc) != failed:
                    log.warning("loomdb: embedding paused (%s: %s)", type(exc).__name__, exc)
                failed = str(exc)
                self._wake.wait(BACKOFF)
                self._wake.clear()
                continue
            if not busy:
                self._wake.wait(self.interval)
                self._wake.clear()


@contextmanager
def embedding_worker(loom: Loom, *, interval: float = INTERVAL) -> Iterator[EmbeddingWorker]:
    """An embedding worker on `loom` for the length of the block."""
    worker = EmbeddingWorker(loom, interval=interval).start()
    try:
        yield worker
    finally:
        worker.stop()
