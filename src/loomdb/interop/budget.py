"""A wall-clock budget for one import (an upload's: `limits.import_seconds`).

    with budget.within(seconds):   # set by `import_file(..., seconds=...)`
        ...
        budget.check()             # at every read, decode, query step and unit

The budget is a context variable, so the readers deep inside a parser check it
without being handed it, and an import without one (the command line's) pays one
lookup per check. Past the deadline `check` raises `OverBudget`, a `TooLarge`: the
import driver rolls back the conversation being written, and the upload's door
removes the trees the import had created, so an import refused for time leaves
nothing of itself.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from ..errors import TooLarge

_DEADLINE: ContextVar[tuple[float, float] | None] = ContextVar("loomdb_import_deadline",
                                                                default=None)


class OverBudget(TooLarge):
    """An import ran past its wall-clock budget; `report`: what had landed by then."""

    report: Any = None


@contextmanager
def within(seconds: float | None) -> Iterator[None]:
    """Run the block under a budget of `seconds` (None: no budget)."""
    if seconds is None:
        yield
        return
    token = _DEADLINE.set((time.monotonic() + seconds, seconds))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def over() -> bool:
    """Is there a budget, and has it run out?"""
    deadline = _DEADLINE.get()
    return deadline is not None and time.monotonic() > deadline[0]


def check() -> None:
    """Raise OverBudget when the import's budget has run out."""
    deadline = _DEADLINE.get()
    if deadline is not None and time.monotonic() > deadline[0]:
        raise OverBudget("import", f"took longer than its budget of {deadline[1]:g} s "
                         f"(LOOMDB_LIMIT_IMPORT_SECONDS); nothing was imported")
