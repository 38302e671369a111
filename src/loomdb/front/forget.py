"""Forgetting and garbage collection for a caller (`loom.forget`, `loom.gc`).

A name is resolved against the caller first: another user's node is the same NotFound
as an unknown one, and a forget that would reach another user's trees (shared
content) is refused. A garbage collection looks at every user's things at once, so
only the operator runs it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from ..forget import service as F
from ..forget import spans as S
from ..forget import trash as T
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

    def trash_tree(self, tree: str, *, reason: str | None = None) -> dict[str, Any]:
        """Set a whole tree aside in the trash (hidden, restorable, purged by `gc` once
        its grace period ends); its line of the trash."""
        tid = self.sight.tree(tree).id if self.sight.shared else tree
        return T.put(self.loom, tid, rule="delete", actor=self.sight.actor, reason=reason)

    def purge_tree(self, tree: str, *, reason: str | None = None, force: bool = False,
                   export_to: str | None = None) -> F.Forgotten:
        """Delete a whole tree for good now, in the trash or not (a held one is
        refused); `export_to`: write it there first (native export)."""
        tid = self.sight.tree(tree).id if self.sight.shared else tree
        if export_to is not None:
            self.sight.operator_only("an export to a folder writes on the server: "
                                     "the store's operator runs it")
        return T.purge(self.loom, tid, actor=self.sight.actor, reason=reason,
                       export_to=export_to, within=self._within(), force=force)

    def trash(self) -> list[dict[str, Any]]:
        """What the trash holds (the caller's trees), first purged first."""
        return T.listing(self.loom, within=self._within())

    def restore(self, tree: str) -> dict[str, Any]:
        """Take a tree out of the trash (the caller's own)."""
        return T.restore(self.loom, tree, within=self._within())

    def hold(self, target: str, *, reason: str | None = None) -> dict[str, Any]:
        """Hold a tree (`tree:ID` or its id) or a session: retention never takes it."""
        return T.hold(self.loom, target, actor=self.sight.actor, reason=reason,
                      within=self._within())

    def unhold(self, target: str) -> dict[str, Any]:
        """Remove the hold on a tree or a session."""
        return T.unhold(self.loom, target, within=self._within())

    def holds(self) -> list[dict[str, Any]]:
        """Every hold on the caller's trees and sessions."""
        return T.holds(self.loom, within=self._within())

    def redact(self, headish: str, *, reason: str | None = None) -> F.Forgotten:
        """Erase a node's content everywhere it is stored; it stays as a tombstone."""
        node = self.sight.position(headish).node if self.sight.shared else None
        return F.redact(self.loom, headish, node=node, reason=reason,
                        actor=self.sight.actor, within=self._within())

    def redact_spans(self, *, text: str | None = None, pattern: str | None = None,
                     secret_type: str | None = None, tree: str | None = None,
                     dry_run: bool = True, reason: str | None = None,
                     seconds: float | None = None) -> S.Scrubbed:
        """Erase a text, a pattern's matches or a kind of secret everywhere it was
        copied (the caller's trees only on a shared store, or `tree`), each span
        replaced by a marker; the nodes keep their ids. `dry_run` (the default): what
        it would change, per tree, nothing written. `seconds`: a pattern's time budget."""
        spans = S.spans_for(self.loom, text=text, pattern=pattern, secret_type=secret_type,
                            seconds=S.PATTERN_SECONDS if seconds is None else seconds)
        if tree is not None and self.sight.shared:
            tree = self.sight.tree(tree).id
        return S.redact_spans(self.loom, spans, tree=tree, within=self._within(),
                              dry_run=dry_run, reason=reason, actor=self.sight.actor)

    def stale(self, *, tree: str | None = None) -> list[dict[str, str]]:
        """Derived values made from what was forgotten since (the caller's trees)."""
        if tree is not None and self.sight.shared:
            tree = self.sight.tree(tree).id
        found = S.stale(self.loom, tree)
        within = self._within()
        if within is not None:
            seen = within({s["tree"] for s in found})
            found = [s for s in found if s["tree"] in seen]
        return found

    def redo_compactions(self, item: str | None = None, *, model: str | None = None,
                         max_tokens: int | None = None,
                         config: Any = None) -> list[dict[str, str]]:
        """Compact again where each stale compaction summary of the caller's trees was
        made (`item`: that one); the new summary is a sibling of the stale one."""
        within = self._within()
        trees = None
        if within is not None:
            trees = within({s["tree"] for s in S.stale(self.loom)})
        rt = self.runtime
        return S.redo_compactions(self.loom, item=item, trees=trees, model=model,
                                  max_tokens=max_tokens,
                                  config=rt.config if config is None else config,
                                  environ=rt.environ)

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
                           rules: dict[str, str] | None = None,
                           source: str | None = None) -> dict[str, Any]:
        """Set the action per kind (`all`: the default), for the store or for writes
        from one `source`, and operator rules (kind -> regex); the policy kept. The
        operator's alone."""
        from ..forget import secrets as S

        self.sight.operator_only("the store's secrets policy is the operator's to set")
        return S.set_policy(self.loom, actions, rules, source)

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

    def purge(self, *, dry_run: bool = False,
              export_to: str | None = None) -> list[dict[str, Any]]:
        """Purge (or with `dry_run`, list) the trees whose time in the trash is over and
        that no hold keeps; `export_to`: write each there first (native export)."""
        self.sight.operator_only("a purge sees every user's trash: the store's operator "
                                 "runs `loomdb gc`")
        return T.purge_due(self.loom, actor=self.sight.actor, export_to=export_to,
                           dry_run=dry_run)

    def trash_for(self) -> str:
        """How long the trash keeps a tree (default 30d)."""
        return T.keep_for(self.loom)

    def set_trash_for(self, value: str) -> str:
        """Keep `value` (a duration; 0s: purge on the next gc) as the trash's grace."""
        self.sight.operator_only("the trash's grace period is the operator's to set")
        return T.set_keep_for(self.loom, value)


__all__ = ["DEFAULT_GRACE", "MAX_GRACE", "MAX_LOG", "Forget", "Gc"]
