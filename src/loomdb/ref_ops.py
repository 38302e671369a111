"""Operations on refs, mixed into `Loom`: fork, views, bookmarks, CAS moves, undo, selections.

Name rules and the one way a ref moves (`refs.move`: compare-and-swap plus a log line)
live in `loomdb.refs`; this module is the public face of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import refs as R
from .errors import InvalidInput, NotFound, RefConflict, check_choice
from .headish import Position, same_ref
from .model import Meta, Node, Ref, RefMove
from .store.nodes import SLOT

if TYPE_CHECKING:
    from .store.base import Backend


class LoomParts:
    """What these operations use from the Loom they are mixed into."""

    backend: Backend
    actor: str
    _sessions: dict[str, Ref]

    if TYPE_CHECKING:
        def resolve(self, headish: str) -> Position: ...
        def _get(self, node_id: str) -> Node: ...
        def path(self, at: str | Position) -> list[str]: ...
        def path_rows(self, at: str | Position) -> list[tuple[Any, ...]]: ...
        def meta(self, at: str | Position) -> Meta: ...
        def check_values(self, **values: Any) -> None: ...


class RefOps(LoomParts):
    def fork(self, at: str | Position, name: str, *, kind: str = "session") -> Ref:
        """A new session (or view) at `at`, sharing everything before it: O(1), no copy."""
        check_choice("kind", kind, ("session", "view"))
        pos = at if isinstance(at, Position) else self.resolve(at)
        origin = {"forked_from": {"ref": pos.ref.name if pos.ref else None, "node": pos.node}}
        with self.backend.transaction():
            return self.create_ref(name, kind, pos.tree, pos.node, dict(pos.selections), origin)

    def view(self, name: str, at: str | Position) -> Ref:
        """A named view at `at`: select versions in it without moving any session."""
        return self.fork(at, name, kind="view")

    def bookmark(self, at: str | Position, label: str) -> Ref:
        """A fixed label on a node, unique in the store and usable as a headish."""
        pos = at if isinstance(at, Position) else self.resolve(at)
        with self.backend.transaction():
            ref = self.create_ref(label, "bookmark", pos.tree, pos.node, {}, None)
            self.backend.meta.set_meta(pos.node, pos.tree, {"bookmarked": 1, "label": label})
        return ref

    def create_ref(
        self, name: str, kind: str, tree: str, node: str, selections: dict[str, str],
        origin: dict[str, Any] | None,
    ) -> Ref:
        """Create a ref at a node, its creation logged (inside or outside a transaction)."""
        R.check_name(name)
        line = R.creation(name, node, actor=self.actor, reason=f"create {kind}", tree=tree)
        ref = Ref(name, kind, tree, node, line.at, line.at, selections, origin)
        if not self.backend.refs.insert_ref(ref, line):
            existing = self.backend.refs.get_ref(name)
            raise InvalidInput(
                f"ref {name!r}",
                f"already exists ({existing.kind if existing else 'ref'}); names are unique",
            )
        self._forget_ref(name)
        return self._ref_or_fail(name)

    def set_ref(self, name: str, at: str | Position, *, expect: str | None = None) -> Ref:
        """Move a session or view to `at` by compare-and-swap (expect: where it must be)."""
        pos = at if isinstance(at, Position) else self.resolve(at)
        with self.backend.transaction():
            ref = self._ref_or_fail(name)
            if ref.kind == "bookmark":
                raise InvalidInput(f"ref {name!r}", "bookmarks are fixed; delete and re-create")
            if pos.tree != ref.tree:
                raise InvalidInput(f"ref {name!r}", f"belongs to tree {ref.tree}, not {pos.tree}")
            if expect is not None and expect != ref.node:
                raise RefConflict(name, expect, ref.node)
            self._move(ref, pos.node, "set")
        return self.ref(name)

    def undo(self, name: str) -> Ref:
        """Move a ref back to where its last move took it from."""
        with self.backend.transaction():
            ref = self._ref_or_fail(name)
            moves = [m for m in self.backend.refs.ref_log(name) if m.old and m.new]
            if not moves:
                raise InvalidInput(f"ref {name!r}", "has no move to undo")
            last = moves[-1]
            if last.new != ref.node:
                raise RefConflict(name, last.new, ref.node)
            self._move(ref, last.old or ref.node, f"undo move {last.seq}")
        return self.ref(name)

    def delete_ref(self, name: str, *, expect: Ref | None = None) -> None:
        """Delete a ref (its nodes stay; its log records the deletion). With `expect`
        (the ref as the caller read it), one deleted and made again since is refused
        as unknown rather than deleted."""
        with self.backend.transaction():
            ref = self._ref_or_fail(name)
            if expect is not None and not same_ref(ref, expect):
                raise NotFound("ref", name)
            self._move(ref, None, "delete")
            self.backend.refs.delete_ref(name)
            if ref.kind == "bookmark":
                self.backend.meta.set_meta(ref.node, ref.tree, {"bookmarked": 0, "label": None})

    def select(self, ref_name: str, version: str | Position) -> Ref:
        """Make a session or view use `version` for that version's slot."""
        pos = version if isinstance(version, Position) else self.resolve(version)
        with self.backend.transaction():
            ref = self._ref_or_fail(ref_name)
            if ref.kind == "bookmark":
                raise InvalidInput(f"ref {ref_name!r}", "a bookmark holds no selections")
            if pos.tree != ref.tree:
                raise InvalidInput(f"node {pos.node}", f"is not in the tree of {ref_name!r}")
            node = self._get(pos.node)
            if node.slot not in {row[SLOT] for row in self.path_rows(ref.name)}:
                raise InvalidInput(
                    f"node {node.id}", f"is not a version of a message on {ref_name!r}'s path;"
                    f" to continue from it, fork there (`loomdb fork {node.id} NAME`)")
            self._select(ref.name, node)
        return self.ref(ref_name)

    def _select(self, name: str, node: Node) -> None:
        """Inside the caller's transaction: `name` uses `node` for its slot (logged)."""
        ref = self._ref_or_fail(name)
        # selecting the original is recorded too: it overrides selections stored on nodes
        self._move(ref, ref.node, f"select {node.slot} -> {node.id}")
        self.backend.refs.set_selection(ref.name, node.slot, node.id)

    def _move(self, ref: Ref, new: str | None, reason: str) -> Ref:
        """Move `ref` as read (compare-and-swap on its log); see refs.move."""
        self._forget_ref(ref.name)
        return R.move(self.backend, ref, new, actor=self.actor, reason=reason)

    def _forget_ref(self, name: str) -> None:
        """Drop what this Loom remembers of a ref it is about to change (see append)."""
        self._sessions.pop(name, None)

    def ref(self, name: str) -> Ref:
        """The ref with this name (NotFound with close names otherwise)."""
        return self._ref_or_fail(name)

    def refs(self, kind: str | None = None, tree: str | None = None) -> list[Ref]:
        """Refs, optionally of one kind and one tree."""
        return self.backend.refs.list_refs(kind, tree)

    def ref_log(self, name: str) -> list[RefMove]:
        """Every move of a ref, oldest first: when, from, to, by whom, why."""
        if self.backend.refs.get_ref(name) is None and not self.backend.refs.ref_log(name):
            raise NotFound("ref", name, self.backend.refs.ref_names_like(name, 10))
        return self.backend.refs.ref_log(name)

    def _ref_or_fail(self, name: str) -> Ref:
        ref = self.backend.refs.get_ref(name)
        if ref is None:
            raise NotFound("ref", name, self.backend.refs.ref_names_like(name, 10))
        return ref

    def _head_of(self, ref: Ref) -> str:
        """The node a ref shows at its head (its selection for the head's slot, if any)."""
        if not ref.selections:
            return ref.node
        node = self._get(ref.node)
        return ref.selections.get(node.slot, node.id)

