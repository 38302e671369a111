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
* **Continuing** (`Shares.fork`, a link made with `allow_continue`): a signed-in
  reader (or the operator) gets a new tree of their own whose root is their next
  message and whose context starts with the shared path up to where the link is now.
  Nothing is copied: the fork's lineage names the shared node, and a grant row made
  with it (`shares.service.record_fork`) is what its context reads the path through
  (`agents.threads.shared_prefix`). So revoking the link stops new forks and leaves
  forks already made reading exactly the path they forked from, no further (a live
  link's later messages are not theirs). The blobs of that path are the fork's to read
  (`Shares.fork_blob`), by the message naming them. The maker sees each link's fork
  count and nothing of the forks: they are the reader's trees.
"""

from __future__ import annotations

import builtins
from typing import Any

from ..errors import InvalidInput, NotFound
from ..headish import Position
from ..loom import Loom
from ..model import Node, Tree
from ..shares import service as S
from ..shares.service import Share
from ..storage_ops import storage
from ..users import Access, Everyone, Owner, user_by_id
from .base import AreaDoor
from .runtime import Runtime
from .sight import Sight


class Shares(AreaDoor):
    """Read-only links to a caller's branches."""

    def create(self, headish: str, *, live: bool = False,
               allow_continue: bool = False) -> tuple[Share, str]:
        """A link to the branch at `headish` and its token (shown once, never stored):
        a snapshot of the node it names, or (`live`) a link that follows the session
        `headish` names; `allow_continue` lets a signed-in reader fork it (`fork`)."""
        pos = self.sight.position(headish)
        if live and (pos.session is None or pos.ref is None or pos.ref.kind != "session"):
            raise InvalidInput(f"share {headish!r}",
                               "a live link follows a session: name one exactly (main, "
                               "not main~1 nor a node id)")
        user = self.sight.who.user.id if self.sight.who.user is not None else None
        with self.sight.atomic():
            return S.create(self.loom, tree=pos.tree, node=None if live else pos.node,
                            session=pos.session if live else None, user=user,
                            allow_continue=allow_continue)

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

    def fork(self, token: str, session: str, text: str) -> tuple[Tree, Node]:
        """Continue a shared branch: a new tree of the caller's whose root is `text`
        (their next message), a session `session` on it, and a context that starts with
        the shared path up to the link's head now. A link made without `allow_continue`
        is refused; an unknown, revoked or dead one is NotFound."""
        link = open_share(self.loom, token, self.runtime)
        if not link.share.allow_continue:
            raise InvalidInput("share", "this link is read-only: its maker did not allow "
                               "continuing it")
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("--text", "give the message that continues the branch")
        pos = link.head()
        title = self.loom.tree(pos.tree).title
        who = self.sight.who.user
        with self.sight.naming_ref(session), self.sight.atomic():
            tree, root = self.loom.new_tree(
                text, session=session, title=title,
                lineage={"shared": {"tree": pos.tree, "node": pos.node,
                                    "share": link.share.id}})
            S.record_fork(self.loom, link.share, tree=tree.id, source_tree=pos.tree,
                          source_node=pos.node, user=who.id if who is not None else None)
            self.sight.claim([tree.id])
        return self.loom.tree(tree.id), root

    def fork_blob(self, headish: str, node: str, ref: str) -> tuple[bytes, str]:
        """A blob (an image...) a message of the shared path a fork of the caller's
        continues from names, and its media type: the fork's right to that path is its
        grant, so it holds after the link is revoked; a message off the path is
        unknown, as an unknown blob is."""
        from ..agents.threads import shared_path
        from .nodes import Nodes

        pos = self.sight.position(headish)
        path = shared_path(self.loom, pos.tree)
        if path is None or not isinstance(node, str) or node not in self.loom.path(path):
            raise NotFound("blob", str(ref)[:80])
        return Nodes(Sight(Everyone(self.loom)), self.runtime).blob(
            Position(node, path.tree), ref)


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
        """What the link shows: its kind, its tree's title, where it is now, and
        whether a signed-in reader may continue it."""
        who = self._maker()
        pos = self.head(who)
        tree = self.loom.tree(pos.tree)
        return {"kind": self.share.kind, "head": pos.node, "session": self.share.session,
                "created_at": self.share.created_at,
                "allow_continue": self.share.allow_continue,
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
        out["share"] = {"kind": self.share.kind, "session": self.share.session,
                        "allow_continue": self.share.allow_continue}
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
