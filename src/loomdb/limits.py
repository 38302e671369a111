"""Every input limit in one value: what an untrusted caller may send before it is refused.

Each limit has a stated default, and an operator changes it with an environment
variable `LOOMDB_LIMIT_<NAME>` (e.g. `LOOMDB_LIMIT_REQUEST_BODY=64MB`) or, for the
library, `loomdb.open(url, limits=Limits(...))`. The environment is read at the edges
only (the CLI, `loomdb serve`, `loomdb gateway`, `loomdb mcp`), which pass the value
down; library code reads `loom.limits`.

A refusal is one line (`TooLarge`, a 413 over HTTP; `InvalidInput` for depth and
counts, a 400) and nothing is written. See docs/security.md for the whole list.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from .errors import InvalidInput

KB = 1024
MB = 1024 * KB
GB = 1024 * MB


@dataclass(frozen=True)
class Limits:
    """The limits an edge enforces on what it is sent (sizes in bytes)."""

    #: a JSON request body over HTTP (the API, the gateway)
    request_body: int = 32 * MB
    #: an uploaded file (`POST /api/import`)
    upload: int = 1 * GB
    #: one blob (an image, audio, a document's bytes), wherever it comes from
    blob: int = 64 * MB
    #: nesting depth of any JSON value taken in: content, options, imported values
    json_depth: int = 64
    #: one line of a coding agent's session file (a line holds one content block), or
    #: one JSON value of one (a Codex value may span lines), or a JSON column of a logs.db
    session_line: int = 64 * MB
    #: one member of a zip archive, by its declared and its actual size
    zip_member: int = 256 * MB
    #: all members of a zip archive read, together
    zip_total: int = 1 * GB
    #: models named in one generate request
    models: int = 8
    #: alternatives in one generate request, over all its models (models x n)
    alternatives: int = 16
    #: seconds a configured tool process may run
    tool_seconds: float = 60.0
    #: tokens one answer may take for a caller over HTTP whose request names no maximum
    #: (the alias's own `params.max_tokens` wins; a thread's options never raise it)
    answer_tokens: int = 8192
    #: seconds one uploaded file's import may take (`POST /api/import`); past it the
    #: import is refused and nothing of it stays
    import_seconds: float = 300.0
    #: messages read from another tool's database (simonw/llm's logs.db), and trees
    #: (root messages) in it: read once into maps, refused past these
    foreign_messages: int = 1_000_000
    foreign_roots: int = 100_000
    #: one prompt piece's text (or template), in bytes of UTF-8
    piece: int = 1 * MB
    #: prompt pieces and templates one user (or the operator) holds, and versions of one
    pieces: int = 10_000
    piece_versions: int = 10_000

    @classmethod
    def from_environ(cls, environ: Mapping[str, str], base: Limits | None = None) -> Limits:
        """`base` (default: the defaults) with every `LOOMDB_LIMIT_<NAME>` applied; a bad
        value is an InvalidInput naming the variable."""
        limits = base or cls()
        changes: dict[str, Any] = {}
        for f in fields(cls):
            var = "LOOMDB_LIMIT_" + f.name.upper()
            raw = environ.get(var)
            if raw is None or not raw.strip():
                continue
            changes[f.name] = _parse(var, raw, float if f.type in ("float", float) else int)
        return replace(limits, **changes) if changes else limits


_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([kmg]?i?b?)?\s*", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": KB, "kb": KB, "kib": KB, "m": MB, "mb": MB, "mib": MB,
          "g": GB, "gb": GB, "gib": GB}


def _parse(var: str, raw: str, kind: type) -> int | float:
    """A whole number (sizes may say KB, MB or GB), or seconds for a float limit."""
    m = _SIZE.fullmatch(raw)
    unit = (m.group(2) or "").lower() if m else ""
    if m is None or unit not in _UNITS:
        raise InvalidInput(var, f"{raw!r} is not a number (sizes may end in KB, MB or GB)")
    value = float(m.group(1)) * _UNITS[unit]
    if not math.isfinite(value) or value <= 0:
        raise InvalidInput(var, f"{raw!r} must be more than 0")
    return value if kind is float else int(value)


DEFAULT = Limits()

#: characters of a name or reference taken in (a document or collection name, a
#: revision, an item, a branch): longer names nothing here and is refused at once
NAME_CHARS = 1000


def check_reference(where: str, text: str) -> str:
    """`text` when it may name something (at most `NAME_CHARS` characters), else an
    InvalidInput saying so (one line: the name itself is not quoted)."""
    if len(text) > NAME_CHARS:
        raise InvalidInput(where, f"is {len(text)} characters long; a name or reference "
                           f"holds at most {NAME_CHARS}")
    return text

__all__ = ["DEFAULT", "GB", "KB", "NAME_CHARS", "Limits", "MB", "check_reference"]
