"""Share links for a caller (`loom.as_(caller).shares`), and what a link reads.

A link is a capability, not an account: `secrets.token_urlsafe(32)` handed out once,
whose holder reads one branch without signing in, and nothing else. So:

* **Making** one needs the branch to be the caller's (resolved against what they see,
  as every name is): a snapshot names a node, a live link names a session exactly
  (`main`, not `main~1`) and follows its head as it moves.
* **Listing and revoking**: a user lists and revokes only their own links (another
  user's is unknown, as a guessed token is); the operator sees every link.
* **Reading** (`Shares.open`, any caller, no token needed) gives a `Shared`: the
  path from the root to the shared node (or the session's head) and a stamp that says
  when it moved. Nothing else of the tree is reachable through it: the branches and
  versions beside the path, the tree's lineage and its other refs are left out, and
  there is no write at all, so no write route can take a link in place of a token.
  A link reads as its maker would: once the maker no longer sees the tree (a removed
  user, a forgotten tree) or the session is gone, the link is unknown, as a revoked or
  a guessed one is (404 over HTTP).
"""

from __future__ import annotations

import builtins
from typing import Any

from ..errors import InvalidInput, NotFound
from ..headish import Position
from ..loom import Loom
from ..shares import service as S
from ..shares.service import Share
from ..storage_ops import storage
from ..users import Access, Everyone, Owner, user_by_id
from .base import AreaDoor
from .runtime import Runtime
from .sight import Sight


class Shares(AreaDoor):
    """Read-only links to a caller's branches."""

    def create(self, headish: str, *, live: bool = False) -> tuple[Share, str]:
        """A link to the branch at `headish` and its token (shown once, never stored):
        a snapshot of the node it names, or (`live`) a link that follows the session
        `headish` names."""
        pos = self.sight.position(headish)
        if live and (pos.session is None or pos.ref is None or pos.ref.kind != "session"):
            raise InvalidInput(f"share {headish!r}",
                               "a live link follows a session: name one exactly (main, "
                               "not main~1 nor a node id)")
        user = self.sight.who.user.id if self.sight.who.user is not None else None
        with self.sight.atomic():
            return S.create(self.loom, tree=pos.tree, node=None if live else pos.node,
                            session=pos.session if live else None, user=user)

    def list(self) -> builtins.list[Share]:
        """The caller's links (the operator: every link), oldest first."""
        who = self.sight.who.user
        return S.listed(self.loom, who.id if who else None, everyone=who is None)

    def revoke(self, token: str) -> Share:
        """Revoke a link, named by its token or its id: it stops working at once."""
        share = S.by_token(self.loom, token) or S.by_id(self.loom, token)
        who = self.sight.who.user
        if share is None or (who is not None and share.user != who.id):
            raise NotFound("share", _shown(token))
        S.delete(self.loom, share.id)
        return share

    def open(self, token: str) -> Shared:
        """What a link's holder reads (whoever the caller is: the token is the
        capability). An unknown, revoked or dead link is NotFound."""
        return open_share(self.loom, token, self.runtime)


def _shown(token: object) -> str:
    """A token as an error names it: its first characters only (it is a secret)."""
    return (str(token)[:S.PREFIX] + "…") if token else ""


def open_share(loom: Loom, token: str, runtime: Runtime) -> Shared:
    share = S.by_token(loom, token)
    if share is None:
        raise NotFound("share", _shown(token))
    return Shared(loom, share, runtime)


class Shared:
    """One link opened: its branch, read as its maker sees it, and nothing more."""

    def __init__(self, loom: Loom, share: Share, runtime: Runtime) -> None:
        self.loom = loom
        self.share = share
        self.runtime = runtime

    @property
    def tree_id(self) -> str:
        return self.share.tree

    def _maker(self) -> Access:
        if self.share.user is None:
            who: Access = Everyone(self.loom)
        else:
            user = user_by_id(self.loom, self.share.user)
            if user is None:
                raise self._gone()
            who = Owner(self.loom, user)
        if not who.sees(self.share.tree):
            raise self._gone()
        return who

    def _gone(self) -> NotFound:
        return NotFound("share", self.share.prefix + "…")

    def head(self, who: Access | None = None) -> Position:
        """Where the link is now: its node, or its session's head. Both are stored
        references, read back exactly (the node by its id, the session by its name,
        never as a prefix or `~N`) and only in the link's tree, which its maker sees."""
        if who is None:
            self._maker()  # gone once its maker no longer sees the tree
        st = storage(self.loom)
        if self.share.session is None:
            found = st.anchor(self.share.node or "")
            if found is None or found.tree != self.share.tree:
                raise self._gone()
            return Position(self.share.node or "", found.tree)
        ref = st.find_ref(self.share.session)
        if ref is None or ref.kind != "session" or ref.tree != self.share.tree:
            raise self._gone()
        session = ref
        return self.loom.resolve(session.name, names=lambda _base: (session.node, session))

    def info(self) -> dict[str, Any]:
        """What the link shows: its kind, its tree's title, where it is now."""
        who = self._maker()
        pos = self.head(who)
        tree = self.loom.tree(pos.tree)
        return {"kind": self.share.kind, "head": pos.node, "session": self.share.session,
                "created_at": self.share.created_at,
                "tree": {"id": tree.id, "title": tree.title, "mode": tree.mode}}

    def stamp(self) -> dict[str, Any]:
        """What changes when the branch does (a live link's session moved); NotFound
        once the link is revoked (a stream reads it again and again)."""
        if S.by_id(self.loom, self.share.id) is None:
            raise self._gone()
        return {"head": self.head().node}

    def thread(self, *, before: str | None = None, limit: int | None = None) -> dict[str, Any]:
        """The shared path as the page draws it (`Nodes.thread`'s shape and paging),
        with nothing beside the path: each message's branches and versions are its
        own, no subagent's tree is named, the tree and session carry no lineage,
        selections nor counts."""
        from .nodes import Nodes

        who = self._maker()
        pos = self.head(who)
        paging: dict[str, Any] = {k: v for k, v in (("before", before), ("limit", limit))
                                  if v is not None}
        out = Nodes(Sight(who), self.runtime).thread(pos, **paging)
        for m in out["messages"]:
            m["branches"] = [m["slot"]]
            m["versions"] = [m["id"]]
            if "subagents" in m:  # child trees: other trees, not shared
                m["subagents"] = []
        tree = out["tree"]
        out["tree"] = {**tree, "lineage": None, "options": {}, "nodes": None}
        if out.get("ref") is not None:
            ref = out["ref"]
            out["ref"] = {**ref, "selections": {}, "origin": None}
        out["share"] = {"kind": self.share.kind, "session": self.share.session}
        return out

    def blob(self, node: str, ref: str) -> tuple[bytes, str]:
        """A blob (an image...) a message of the shared path names, and its media type;
        a message off the path is unknown, as an unknown blob is."""
        from .nodes import Nodes

        who = self._maker()
        pos = self.head(who)
        if not isinstance(node, str) or node not in self.loom.path(pos):
            raise NotFound("blob", str(ref)[:80])
        return Nodes(Sight(who), self.runtime).blob(node, ref)


__all__ = ["Shared", "Shares", "open_share"]
