"""Retention: set aside whole trees not touched for a while (`loomdb gc --older-than`).

A tree's last touch is its latest change: its own row or its newest node (what
`loomdb trees` shows as updated). Each tree goes to the trash (`trash`), where it
stays for the grace period, hidden, restorable, before a later `gc` purges it as
`delete tree:ID` does, logged as `retention` with the rule and cut-off as the reason.
A held tree (or one holding a held session) is never taken. A store keeps a default
(`gc --retention 90d`), which a plain `loomdb gc` then applies.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..model import iso, now
from ..storage_ops import storage
from .durations import parse

if TYPE_CHECKING:
    from ..loom import Loom



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
    """Move to the trash (or with `dry_run`, list) the trees last touched before
    now - older_than, but for held ones and those already there (`held`: their ids)."""
    from . import trash as T

    cutoff = iso(datetime.now(UTC) - parse(older_than))
    skip = T.trashed(loom)
    held = T.held_trees(loom)
    found = [t for t in [*loom.trees(), *loom.trees(archived=True)] if t.id not in skip]
    if tree is not None:
        found = [t for t in found if t.id == tree]
        if not found:
            raise InvalidInput("--tree", f"no tree with id {tree!r}")
    old = sorted((t for t in found if t.updated_at < cutoff), key=lambda t: t.updated_at)
    stale = [t for t in old if t.id not in held]
    out: dict[str, Any] = {"older_than": older_than, "cutoff": cutoff, "dry_run": dry_run,
                           "trees": [{"id": t.id, "title": t.title, "updated_at": t.updated_at,
                                      "nodes": t.nodes} for t in stale],
                           "held": sorted(t.id for t in old if t.id in held), "trashed": 0,
                           "keep_for": T.keep_for(loom)}
    if dry_run:
        return out
    for t in stale:
        T.put(loom, t.id, rule=f"retention {older_than}", actor=actor,
              reason=f"not touched since {t.updated_at} (older than {older_than}, at {now()})")
        out["trashed"] += 1
    return out
