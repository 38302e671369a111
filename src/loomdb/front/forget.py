"""Forgetting and garbage collection for a caller (`loom.forget`, `loom.gc`).

A name is resolved against the caller first: another user's node is the same NotFound
as an unknown one, and a forget that would reach another user's trees (shared
content) is refused. A garbage collection looks at every user's things at once, so
only the operator runs it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from ..forget import service as F
from ..gc import service as G
from .base import AreaDoor

#: the most lines of the record one read answers
MAX_LOG = F.MAX_LOG
#: what a collection keeps by default: anything newer than an hour
DEFAULT_GRACE = G.DEFAULT_GRACE
#: the longest grace a collection takes
MAX_GRACE = G.MAX_GRACE


class Forget(AreaDoor):
    """Delete, redact, and the record of forgetting."""

    def delete(self, address: str, *, force: bool = False,
               reason: str | None = None, dry_run: bool = False) -> F.Forgotten:
        """Delete a node and everything created from it, or `tree:ID` whole (refs at or
        below it refuse it unless `force`, which deletes them too); `dry_run`: what
        would go, nothing written."""
        if address.startswith("tree:"):
            return self.delete_tree(address[len("tree:"):], force=force, reason=reason,
                                    dry_run=dry_run)
        node = self.sight.position(address).node if self.sight.shared else None
        return F.delete(self.loom, address, node=node, force=force, reason=reason,
                        actor=self.sight.actor, within=self._within(), dry_run=dry_run)

    def delete_tree(self, tree: str, *, force: bool = False,
                    reason: str | None = None, dry_run: bool = False) -> F.Forgotten:
        """Delete a whole tree (its refs too with `force`; `dry_run`: what would go)."""
        address = f"tree:{self.sight.tree(tree).id}" if self.sight.shared else f"tree:{tree}"
        return F.delete(self.loom, address, force=force, reason=reason,
                        actor=self.sight.actor, within=self._within(), dry_run=dry_run)

    def redact(self, headish: str, *, reason: str | None = None) -> F.Forgotten:
        """Erase a node's content everywhere it is stored; it stays as a tombstone."""
        node = self.sight.position(headish).node if self.sight.shared else None
        return F.redact(self.loom, headish, node=node, reason=reason,
                        actor=self.sight.actor, within=self._within())

    def log(self, *, tree: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        """The record of forgetting, newest first (the lines about trees the caller sees)."""
        return F.log(self.loom, limit=limit, tree=tree, within=self._within())

    def secrets(self, *, tree: str | None = None, limit: int = 1000) -> list[dict[str, Any]]:
        """The secrets scanner's findings, newest first: kind, node, place, span, action
        (never the secret). A user of a shared store names one of their trees."""
        from ..forget import secrets as S

        if self.sight.shared:
            if tree is None:
                self.sight.operator_only("the findings of every tree are the operator's; "
                                         "name one of your trees")
            else:
                tree = self.sight.tree(tree).id
        return S.findings(self.loom, tree=tree, limit=limit)

    def secrets_policy(self) -> dict[str, Any]:
        """The store's secrets policy: {default, kinds, rules, known}."""
        from ..forget import secrets as S

        return S.policy(self.loom)

    def set_secrets_policy(self, actions: dict[str, str] | None = None,
                           rules: dict[str, str] | None = None) -> dict[str, Any]:
        """Set the action per kind (`all`: the default) and operator rules (kind ->
        regex); the policy kept. The operator's alone."""
        from ..forget import secrets as S

        self.sight.operator_only("the store's secrets policy is the operator's to set")
        return S.set_policy(self.loom, actions, rules)

    def _within(self) -> F.Within | None:
        return self.sight.visible if self.sight.shared else None


class Gc(AreaDoor):
    """Garbage collection: contents and blobs nothing reachable uses."""

    def collect(self, *, dry_run: bool = False,
                grace: timedelta = G.DEFAULT_GRACE) -> dict[str, int]:
        """Delete (or with `dry_run`, count) what nothing reachable uses, keeping
        anything newer than `grace`."""
        self.sight.operator_only("garbage collection sees every user's things: "
                                 "the store's operator runs `loomdb gc`")
        return G.collect(self.loom, dry_run=dry_run, grace=grace)

    def retention(self) -> str | None:
        """The store's default retention (a duration such as `90d`), or None."""
        from ..forget import retention as RT

        return RT.default(self.loom)

    def set_retention(self, value: str | None) -> str | None:
        """Keep `value` (a duration; None or `off` clears it) as the store's default
        retention; answers what is kept."""
        from ..forget import retention as RT

        self.sight.operator_only("the store's retention is the operator's to set")
        return RT.set_default(self.loom, value)

    def sweep(self, older_than: str, *, tree: str | None = None,
              dry_run: bool = False) -> dict[str, Any]:
        """Delete (or with `dry_run`, list) whole trees not touched for `older_than`
        (one tree id with `tree`), as `delete tree:ID --force` does."""
        from ..forget import retention as RT

        self.sight.operator_only("a retention sweep sees every user's trees: "
                                 "the store's operator runs `loomdb gc --older-than`")
        return RT.sweep(self.loom, older_than, tree=tree, dry_run=dry_run,
                        actor=self.sight.actor)


__all__ = ["DEFAULT_GRACE", "MAX_GRACE", "MAX_LOG", "Forget", "Gc"]
