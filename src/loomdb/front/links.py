"""References and search for a caller (`loom.references`, `loom.search`): both ends of
a link must be things the caller sees, and what they list is only what the caller sees
(see `loomdb.front.sight`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..references import service as R
from ..search import places
from ..search import service as S
from .base import AreaDoor
from .sight import Seen

#: the most hits one search answers
MAX_LIMIT = S.MAX_LIMIT


class References(AreaDoor):
    """Links between any two addresses, and backlinks."""

    def link(self, src: str, dst: str, type: str = "link") -> dict[str, Any]:
        """Reference `dst` from `src`: between two nodes the core's edge, between any
        other addresses a reference of any type that backlinks find."""
        seen = Seen(self.sight)
        return R.link(self.loom, self.sight.address(src, seen),
                      self.sight.address(dst, seen), type)

    def backlinks(self, entity: str) -> list[dict[str, Any]]:
        """Everything that references `entity` among what the caller sees (a reference
        whose end is gone is marked `dangling`)."""
        if not self.sight.shared:
            return R.backlinks(self.loom, entity)
        seen = Seen(self.sight)
        entity = self.sight.address(entity, seen)
        return [x for x in R.backlinks(self.loom, entity)
                if seen.address(x["from"]) and seen.address(x["to"])]


class Search(AreaDoor):
    """Messages, document revisions and collection items by words or meaning:
    `loom.search("words", mode="hybrid", tree=..., kind=...)`."""

    def __call__(self, text: str, *, tree: str | None = None, role: str | None = None,
                 author: str | None = None, tag: str | None = None,
                 kind: str | None = None, limit: int = 20,
                 mode: str = "text") -> S.Hits:
        """Hits among what the caller sees, best first (`{"entity", "kind", "tree"?,
        "snippet", "marks", "score"}`, and a message's `role`, `created_at`, `side`,
        `leaf`); a semantic or hybrid query's `pending` says how many entries are not
        embedded yet."""
        return self.query(S.Query(text, tree, role, author, tag, kind, limit, mode))

    def query(self, q: S.Query) -> S.Hits:
        """As the call, for a query made whole; each message hit says where it sits
        (`loomdb.search.places`: role, date, side branch, the branch's latest message),
        read for the hits the caller sees only."""
        hits = self._ranked(q)
        places.describe(self.loom, hits)
        return hits

    def _ranked(self, q: S.Query) -> S.Hits:
        """The hits the caller sees. A user's tree filter is resolved against their
        trees first; what they see (their trees, documents and
        collections, `Sight.scope`) goes into the query itself, so only their entries
        are ranked and a page holds `q.limit` of theirs whenever they have that many."""
        if not self.sight.shared:
            aside = self.sight.trashed()
            if not aside:
                return S.search(self.loom, q)
            # the trash is hidden: ask for as many more as it may hold, then drop them
            found = S.search(self.loom, replace(q, limit=max(q.limit, min(q.limit * 4, S.MAX_LIMIT))))
            return S.Hits.of([h for h in found if h.get("tree") not in aside][:q.limit],
                             found.pending)
        if q.tree is not None:
            q = replace(q, tree=self.sight.tree(q.tree).id)
        return S.search(self.loom, q, self.sight.scope())

    def reindex(self, everything: bool = False) -> int:
        """Embed the entries not embedded yet (`everything`: every entry again); how
        many. The operator's: it reads the whole store."""
        self.sight.operator_only("reindexing reads the whole store")
        return S.reindex(self.loom, everything)

    def status(self) -> dict[str, int]:
        """`{"embedded", "total", "pending"}`: how far semantic indexing has come over
        the whole store (the operator's: counts over everyone's entries)."""
        self.sight.operator_only("the embedding status counts the whole store")
        return S.status(self.loom)

    def embed_behind(self) -> Callable[[], None]:
        """Start the embedding worker (`search.semantic.worker`) beside a long-lived
        command (serve, watch, gateway): new entries are embedded behind the writes, so
        a semantic query never waits for a backlog. Returns what stops it (before the
        store closes). The operator's: it reads the whole store."""
        from ..search.semantic.worker import EmbeddingWorker

        self.sight.operator_only("the embedding worker reads the whole store")
        return EmbeddingWorker(self.loom).start().stop


__all__ = ["MAX_LIMIT", "References", "Search"]
