"""Trees and refs for a caller (`loom.as_(caller).trees`, `.refs`): list, create,
export, import, verify; sessions, views and bookmarks. A user lists, reads and writes
only their trees, and the refs on them."""

from __future__ import annotations

import builtins
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from ..errors import InvalidInput, NotFound, TooLarge
from ..model import Node, Ref, RefMove, Tree
from .base import AreaDoor

if TYPE_CHECKING:
    from ..interop.report import ImportReport, Outcome


class Trees(AreaDoor):
    """Whole conversations."""

    def list(self, *, archived: bool = False) -> builtins.list[Tree]:
        """The caller's trees, newest first."""
        return self.sight.trees(archived=archived)

    def lineage(self, *, archived: bool = False) -> builtins.list[dict[str, Any]]:
        """The caller's trees with where each came from: the parent a subagent's tree
        was spawned from, the tool an import came from, the refs forked in it (see
        `front.lineage`)."""
        from .lineage import lineage

        return lineage(self.sight, archived=archived)

    def get(self, name: str) -> Tree:
        """A tree by id, prefix or any headish in it."""
        return self.sight.tree(name)

    def new(self, text: Any, *, system: str | None = None, session: str | None = None,
            mode: str = "dialogue", title: str | None = None,
            options: dict[str, Any] | None = None, system_piece: str | None = None,
            template: str | None = None, role: str = "user") -> tuple[Tree, Node]:
        """A tree with its first message (and a session at it when named), the caller's:
        from a template of theirs when named (`loomdb.pieces`: its pieces lead the
        message, its system, options and model are the tree's unless given), with a
        system piece of theirs when named."""
        from ..pieces import service as P

        root: dict[str, Any] = {}
        if template is not None:
            tpl = P.template(self.loom, self.sight.pieces, template)
            text, system, options, root = P.apply_template(tpl, text, system, options)
        if system_piece is not None:
            root[P.SYSTEM_OPTION] = system_piece
        with self.sight.naming_ref(session), self.sight.atomic():
            tree, node = self.loom.new_tree(
                self.sight.content(text), system=system, session=session, mode=mode,
                title=title, role=role, options=options or None,
                node_options=self.sight.options(root or None, "system_piece"))
            self.sight.claim([tree.id])
        return tree, node

    def update(self, name: str, *, title: str | None = None,
               archived: bool | None = None) -> Tree:
        """Rename a tree of the caller's, archive it or bring it back, in one
        transaction; the tree as it then is."""
        from ..storage_ops import storage

        if title is None and archived is None:
            raise InvalidInput("tree", "give a title, archived, or both")
        tree = self.get(name)
        with storage(self.loom).transaction():
            if title is not None:
                self.loom.rename(tree.id, title)
            if archived is not None:
                self.loom.archive(tree.id, archived)
        return self.get(tree.id)

    def export(self, name: str, out: TextIO, *, format: str = "json",
               paths: str = "leaves") -> int:
        """One tree into a text stream, in a format other tools (or loomdb) read back."""
        from ..interop.export import export

        return export(self.loom, out, target=self.get(name).id, format=format, paths=paths)

    def outline(self, name: str, *, preview: int = 200) -> dict[str, Any]:
        """A tree, its nodes (the first `preview` characters of their text), the
        sessions on it and its leaves."""
        from ..content import plain_text

        tree, lm = self.get(name), self.loom
        nodes = [{"id": n.id, "parent": n.parent, "role": n.role, "author": n.author,
                  "text": plain_text(n.content)[:preview]} for n in lm.tree_nodes(tree.id)]
        sessions = [{"name": r.name, "node": r.node} for r in lm.refs("session", tree.id)]
        return {**tree.to_json(), "node_list": nodes, "sessions": sessions,
                "leaves": lm.leaves(tree.id)}

    def map(self, name: str, at: str | None = None) -> bytes:
        """The whole tree as the web page's tree map draws it, as JSON bytes: one
        compact answer for 10,000 nodes and more (see `loomdb.treemap`); `at` is the
        headish whose path is shown."""
        from ..treemap import tree_map_json

        return tree_map_json(self.sight.who, name, at)

    def verify(self) -> dict[str, Any]:
        """The hash chain of every tree the caller sees: `{"ok", "checked", "broken"}`."""
        if not self.sight.shared:
            return dict(self.loom.verify().to_json())
        ok, checked, broken = True, 0, []
        for tree in self.sight.every_tree():
            part = self.loom.verify(tree.id).to_json()
            ok, checked = ok and part["ok"], checked + part["checked"]
            broken += part["broken"]
        return {"ok": ok, "checked": checked, "broken": broken}

    def import_upload(self, path: str, filename: str, format: str = "auto") -> ImportReport:
        """Every conversation of an uploaded export file, one tree each, the caller's.

        An upload reads no other file (`files=None`: a dataset's images named by path
        are not read, each a warning) and is held to the store's upload limit. Each
        conversation's trees are recorded as the caller's inside that conversation's
        own transaction; a file that would grow another user's tree is refused before
        anything is written, and one that grew meanwhile rolls its conversation back.

        The whole import (the check above included) has `limits.import_seconds` of wall
        clock: past it the upload is refused in one line (TooLarge), the conversation
        being written rolls back and the trees the import had created are deleted
        again, so nothing of it stays."""
        from ..interop import budget

        lm = self.loom
        if os.path.getsize(path) > lm.limits.upload:
            raise TooLarge("upload", f"over the limit of {lm.limits.upload} bytes "
                           "(LOOMDB_LIMIT_UPLOAD); nothing was imported")
        try:
            with budget.within(lm.limits.import_seconds):
                if self.sight.shared:
                    self._refuse_foreign(trees_in_file(path, format, lm))
                report = lm_import(lm, path, format, self._claiming(),
                                   self.sight.sees_tree if self.sight.shared else None)
        except budget.OverBudget as exc:
            self._undo(exc.report)
            raise TooLarge("upload", exc.why) from None
        with self.sight.atomic():
            self.sight.who.record_import(filename, report.to_json())
        return report

    def _undo(self, report: ImportReport | None) -> None:
        """Delete the trees an import refused for time had created (each whole)."""
        from ..forget import service as F

        for tree in report.trees if report is not None else []:
            F.delete(self.loom, f"tree:{tree}", force=True, actor=self.sight.actor,
                     reason="its upload ran past the import's time budget; undone")

    def _claiming(self) -> Callable[[Outcome], None]:
        """Run inside each imported conversation's transaction: a new tree becomes the
        caller's there and then, and keeps a spawn lineage only to a tree of theirs
        (this import's trees are); one that grew must already be theirs (else the
        conversation rolls back)."""
        from ..interop.links import unseen_parent

        sight = self.sight

        def claim(outcome: Outcome) -> None:
            with sight.atomic():
                if outcome.created:
                    sight.claim([outcome.tree])
                    if sight.shared and (why := unseen_parent(sight.loom, outcome.tree,
                                                              sight.sees_tree)):
                        outcome.warnings.append(why)
                elif not sight.sees_tree(outcome.tree):
                    raise InvalidInput("import", "this conversation belongs to another user "
                                       "of this store; it was not imported")
        return claim

    def _refuse_foreign(self, tree_ids: set[str]) -> None:
        """Refuse (before writing anything) an import that would grow another user's tree."""
        for tid in sorted(tree_ids):
            if self.sight.sees_tree(tid):
                continue
            try:
                self.loom.tree(tid)
            except NotFound:
                continue  # new: it will be the caller's
            raise InvalidInput("import", "this file holds conversations another user of "
                               "this store imported; nothing was imported")


def lm_import(lm: Any, path: str, format: str, in_unit: Callable[[Outcome], None],
              sees: Callable[[str], bool] | None = None) -> ImportReport:
    """The import driver with the subagent lineage recorder (as `Loom.import_file`);
    `sees`: the trees whose nodes the file's lines may name (the caller's)."""
    from ..agents.subagents import record_imported
    from ..interop.importer import import_file

    return import_file(lm, path, format, on_spawn=lambda spawned: record_imported(lm, spawned),
                       files=None, in_unit=in_unit, sees=sees)


def trees_in_file(path: str, format: str, lm: Any) -> set[str]:
    """The ids of the trees an import of `path` would write or grow. Imported ids derive
    from the source, so the same export imported by two users names the same trees.
    Read as an upload is: no file besides it, within the store's limits."""
    from ..interop import native
    from ..interop.detect import FORMATS
    from ..interop.importer import NATIVE, guarded_units, open_export
    from ..interop.model import ParseError
    from ..interop.writer import tree_id_for

    fmt, inp = open_export(path, format, files=None, limits=lm.limits)
    if fmt == NATIVE:
        return {str(doc["tree"]["id"]) for _, doc in guarded_units(native.read_units(inp), "")
                if isinstance(doc, dict) and isinstance(doc.get("tree"), dict)
                and isinstance(doc["tree"].get("id"), str)}
    found: set[str] = set()
    for _, conv in guarded_units(((".", c) for c in FORMATS[fmt](inp)), ""):
        if isinstance(conv, ParseError) or not getattr(conv, "messages", None):
            continue  # refused again, and reported, by the import itself
        try:
            found.add(tree_id_for(conv))
        except Exception:  # noqa: BLE001 - a conversation the import will refuse
            continue
    return found


class Refs(AreaDoor):
    """Sessions, views and bookmarks: a user's are those on their trees."""

    def list(self, kind: str | None = None, tree: str | None = None) -> builtins.list[Ref]:
        """The caller's refs (of one kind, of one tree); without a tree, those of the
        trees in the trash are left out, as the trees are."""
        tree_id = self.sight.tree(tree).id if tree else None
        found = self.sight.who.refs(kind, tree_id)
        aside = set() if tree_id else self.sight.trashed()
        return [r for r in found if r.tree not in aside] if aside else found

    def get(self, name: str) -> Ref:
        """Where a ref points."""
        return self.sight.ref(name)

    def session(self, name: str) -> dict[str, Any]:
        """A session: where it points, and the conversation up to there (each node in
        the one shape of `loomdb.shapes`)."""
        from .. import shapes

        ref, lm = self.sight.ref(name), self.loom
        path = lm.nodes(lm.path(self.sight.position(ref.name)))
        return {**ref.to_json(), "nodes": [shapes.node_json(n, lm.meta(n.id)) for n in path]}

    def create(self, at: str, name: str, *, kind: str = "session") -> Ref:
        """A session (a fork when `at` is an existing node), a view, or a bookmark at `at`."""
        pos = self.sight.position(at)
        with self.sight.naming_ref(name, kind):
            if kind == "bookmark":
                return self.loom.bookmark(pos, name)
            return self.loom.fork(pos, name, kind=kind)

    def log(self, name: str) -> builtins.list[RefMove]:
        """Every move of a ref: when, from, to, by whom, why (the lines of this ref
        only, even if the name was made again for another tree)."""
        ref = self.sight.ref(name)
        return [m for m in self.loom.ref_log(name) if m.tree in (ref.tree, None)]

    def select(self, name: str, node: str) -> Ref:
        """Make a session or view use a given version of a slot."""
        self.sight.ref(name)
        return self.loom.select(name, self.sight.position(node))

    def switch(self, name: str, node: str) -> Ref:
        """Show another version or alternative in a session or view, as a chat does,
        the ref staying the thread's name (`loomdb select` for a version):

        * a version of a message on its path is selected; when what follows there was
          written after another version and this one has answers of its own, the ref
          moves to the newest leaf below them (each version keeps its own answer);
        * an alternative beside a message on its path (another continuation of the
          message before) moves the ref to the newest leaf below it, the version it
          answers selected above it.
        Anything else is refused: fork there instead."""
        from ..storage_ops import storage
        from ..store.base import ID, SLOT

        ref, pos, lm = self.sight.ref(name), self.sight.position(node), self.loom
        if ref.kind == "bookmark":
            raise InvalidInput(f"ref {name!r}", "a bookmark holds no selections")
        if pos.tree != ref.tree:
            raise InvalidInput(f"node {pos.node}", f"is not in the tree of {name!r}")
        target = lm.node(pos)
        with storage(lm).transaction():
            rows = lm.path_rows(ref.name)
            path, slots = [r[ID] for r in rows], [r[SLOT] for r in rows]
            if target.slot in slots:
                k = slots.index(target.slot)
                lm.select(ref.name, pos)
                if k + 1 < len(path) and lm.node(path[k + 1]).parent != target.id:
                    own = [c for c in lm.children(pos) if lm.node(c).parent == target.id]
                    if own:
                        lm.set_ref(ref.name, _newest_leaf(lm, max(own)), expect=ref.node)
            elif target.parent is not None and (above := lm.node(target.parent)).slot in slots:
                if path[slots.index(above.slot)] != above.id:  # it answers another version
                    lm.select(ref.name, above.id)
                lm.set_ref(ref.name, _newest_leaf(lm, target.id), expect=ref.node)
            else:
                raise InvalidInput(f"node {target.id}", f"is neither a version nor an "
                                   f"alternative of a message on {name!r}'s path; fork "
                                   "there to continue from it")
        return self.sight.ref(ref.name)

    def delete(self, name: str) -> None:
        """Delete a ref (its nodes stay): the ref checked, not one made since."""
        self.loom.delete_ref(name, expect=self.sight.ref(name))


def _newest_leaf(lm: Any, node: str) -> str:
    """The end of the newest continuations below `node` (itself when none)."""
    for _ in range(MAX_WALK):
        kids = lm.children(node)
        if not kids:
            return node
        node = max(kids)  # ids are ULIDs: the greatest is the newest
    return node


#: the most messages a switch walks down to a leaf
MAX_WALK = 100_000

__all__ = ["Refs", "Trees", "trees_in_file"]
