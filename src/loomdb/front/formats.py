"""The names of the formats an edge offers in its help, read from the library's
registry (`loomdb.interop.formats`), so a usage line never lists them by hand."""

from __future__ import annotations

from ..interop.formats import AGENTS, usage


def import_usage(extra: tuple[str, ...] = ()) -> str:
    """`auto|chatgpt|...` of every format an import reads, with `extra` at the end."""
    return usage(extra)


def watch_usage() -> str:
    """`auto|claude-code|...` of the agents whose session folders `watch` follows."""
    return usage(pool=AGENTS)
