"""Retention: delete whole trees not touched for a while (`loomdb gc --older-than`).

A tree's last touch is its latest change: its own row or its newest node (what
`loomdb trees` shows as updated). Each tree goes as `delete tree:ID --force` does, in
its own transaction, logged as `retention` with the cut-off as the reason. A store
keeps a default (`gc --retention 90d`), which a plain `loomdb gc` then applies.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..model import iso, now
from ..storage_ops import storage
from . import service as F

if TYPE_CHECKING:
    from ..loom import Loom

_DURATION = re.compile(r"^([1-9][0-9]{0,6})([smhdw])$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
#: the longest retention one can ask for (a typo of a year count stays refusable)
MAX = timedelta(days=36500)


def parse(text: str, where: str = "--older-than") -> timedelta:
    """`90d`, `12h`, `30s`, `2w`, `15m` -> a timedelta; anything else refused."""
    m = _DURATION.match(text.strip()) if isinstance(text, str) else None
    if m is None:
        raise InvalidInput(where, f"{text!r} is not a duration like 90d, 12h, 30m, 30s or 2w")
    span = timedelta(seconds=int(m[1]) * _UNIT[m[2]])
    if span > MAX:
        raise InvalidInput(where, "is longer than 100 years")
    return span


def default(loom: Loom) -> str | None:
    """The store's default retention (a duration), or None."""
    return storage(loom).forgetting().setting("retention")


def set_default(loom: Loom, value: str | None) -> str | None:
    """Keep `value` (a duration; None or "off" clears it) as the store's default."""
    if value in (None, "off"):
        value = None
    else:
        parse(value, "--retention")
    with storage(loom).transaction():
        storage(loom).forgetting().set_setting("retention", value)
    return value


def sweep(loom: Loom, older_than: str, *, tree: str | None = None, dry_run: bool = False,
          actor: str | None = None) -> dict[str, Any]:
    """Delete (or with `dry_run`, list) the trees last touched before now - older_than."""
    cutoff = iso(datetime.now(UTC) - parse(older_than))
    found = [*loom.trees(), *loom.trees(archived=True)]
    if tree is not None:
        found = [t for t in found if t.id == tree]
        if not found:
            raise InvalidInput("--tree", f"no tree with id {tree!r}")
    stale = sorted((t for t in found if t.updated_at < cutoff), key=lambda t: t.updated_at)
    out: dict[str, Any] = {"older_than": older_than, "cutoff": cutoff, "dry_run": dry_run,
                           "trees": [{"id": t.id, "title": t.title, "updated_at": t.updated_at,
                                      "nodes": t.nodes} for t in stale], "deleted": 0}
    if dry_run:
        return out
    for t in stale:
        F.delete(loom, f"tree:{t.id}", force=True, actor=actor, action="retention",
                 reason=f"not touched since {t.updated_at} (older than {older_than}, at {now()})")
        out["deleted"] += 1
    return out
