"""The Claude Agent SDK's session store on a loomdb store: `LoomSessionStore` (see
`store`). It needs no import of the SDK but for session summaries (the SDK's own fold),
so a program that uses the SDK has what it needs."""

from __future__ import annotations

from .store import LoomSessionStore

__all__ = ["LoomSessionStore"]
