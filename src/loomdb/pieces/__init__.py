"""Prompt pieces: named texts used by many threads (a system prompt, a rubric, a long
document) and templates (a system, pieces, options and a default model a new thread
starts from), versioned by content hash and stored once (see service)."""

from ..store.areas import Area

PIECES = Area("pieces", "loomdb.pieces", hooks="loomdb.pieces.hooks:HOOKS")
KINDS = ("piece", "template")

__all__ = ["KINDS", "PIECES"]
