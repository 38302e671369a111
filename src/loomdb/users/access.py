"""Who may see what: every operation of the front door acts for an Access (`loom.as_`).

`Everyone` is the single-user store (no users exist): all trees are visible. `Owner`
is one user: a tree is visible only when the users area records them as its owner,
and anything else (another user's tree, ref, node or draft) is reported exactly as an
unknown name would be, so a user cannot even learn that it exists.

Documents and collections are owned the same way, by id (`user_documents`,
`user_collections`); their names stay unique in the whole store, as in the library.
This area sits below the documents and collections areas, so it knows their ids
only: the front door maps names and addresses to ids (`loomdb.front.sight`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from contextlib import AbstractContextManager

from ..errors import AmbiguousName, NotFound
from ..headish import BaseResolver, Position, looks_like_prefix
from ..loom import Loom
from ..model import Ref, Tree, new_id, now
from ..store.areas import Unit
from .accounts import USERS, User
from .names import UserNames

#: (table, id column) of each kind of owned thing besides trees
_DOCUMENTS = ("user_documents", "document_id")
_COLLECTIONS = ("user_collections", "collection_id")


class Access:
    """The single-user store: everything is visible, nothing is owned."""

    user: User | None = None

    def __init__(self, loom: Loom) -> None:
        self.loom = loom

    def sees(self, tree_id: str) -> bool:
        return True

    def visible(self, tree_ids: Iterable[str]) -> set[str]:
        return set(tree_ids)

    def tree_ids(self) -> set[str]:
        """Every tree the caller sees, archived ones too."""
        return {t.id for t in self.loom.trees()} | {t.id for t in self.loom.trees(archived=True)}

    def atomic(self) -> AbstractContextManager[Unit]:
        """One transaction over the core and the users area: a write and the ownership
        it records commit or roll back together."""
        return self.loom.unit(USERS)

    def claim(self, tree_ids: Iterable[str]) -> None:
        """Record new trees as the caller's (call inside `atomic`, with the write)."""

    def record_import(self, filename: str, summary: dict[str, object]) -> None:
        """Remember an import and what it brought (users only)."""

    # -- documents and collections, by id ------------------------------------------
    def sees_document(self, document_id: str) -> bool:
        return True

    def sees_collection(self, collection_id: str) -> bool:
        return True

    def visible_documents(self, document_ids: Iterable[str]) -> set[str]:
        return set(document_ids)

    def visible_collections(self, collection_ids: Iterable[str]) -> set[str]:
        return set(collection_ids)

    def claim_document(self, document_id: str) -> None:
        """Record a new document as the caller's (inside `atomic`, with the write)."""

    def claim_collection(self, collection_id: str) -> None:
        """Record a new collection as the caller's (inside `atomic`, with the write)."""

    def release_document(self, document_id: str) -> None:
        """Forget the owner of a deleted document (inside `atomic`, with the delete)."""

    # -- lookups that hide what is not the caller's ----------------------------------
    #: how base names resolve for this caller (None: against the whole store)
    names: BaseResolver | None = None

    def position(self, headish: str) -> Position:
        """`loom.resolve` against what the caller sees (see `.names`): resolved once,
        so the operation takes this Position, never the text again."""
        try:
            pos = self.loom.resolve(headish, names=self.names)
        except NotFound:
            if self.user is None:
                raise
            raise NotFound("headish", headish) from None
        if not self.sees(pos.tree):
            raise NotFound("headish", headish)
        return pos

    def at(self, headish: str) -> str | Position:
        """What an operation at `headish` is given. The single-user store checks
        nothing, so the text goes to the library, which resolves it once (and an append
        through a session it moved last takes its fast path); a user's name is resolved
        here, once, against what they see, and the operation takes the Position."""
        return headish if self.user is None else self.position(headish)

    def tree(self, name: str) -> Tree:
        """`loom.tree` (id, prefix or headish), refusing one that is not visible."""
        try:
            tree = self.loom.tree(self._tree_id(name))
        except NotFound:
            if self.user is None:
                raise
            raise NotFound("tree", name) from None
        if not self.sees(tree.id):
            raise NotFound("tree", name)
        return tree

    def ref(self, name: str) -> Ref:
        """`loom.ref`, refusing one whose tree is not visible."""
        try:
            ref = self.loom.ref(name)
        except NotFound:
            if self.user is None:
                raise
            raise NotFound("ref", name) from None
        if not self.sees(ref.tree):
            raise NotFound("ref", name)
        return ref

    def _tree_id(self, name: str) -> str:
        """The name `loom.tree` is given: the single-user store's names as they are."""
        return name

    def trees(self, archived: bool = False) -> list[Tree]:
        found = self.loom.trees(archived=archived)
        keep = self.visible(t.id for t in found)
        return [t for t in found if t.id in keep]

    def refs(self, kind: str | None = None, tree: str | None = None) -> list[Ref]:
        found = self.loom.refs(kind, tree)
        keep = self.visible({r.tree for r in found})
        return [r for r in found if r.tree in keep]


class Everyone(Access):
    """No users exist: the store is one person's."""


class Owner(Access):
    """One user: sees and touches only the trees, documents and collections recorded as
    theirs."""

    def __init__(self, loom: Loom, user: User) -> None:
        super().__init__(loom)
        self.user = user
        self._uid = user.id
        self.names = UserNames(loom, user.id)

    def _tree_id(self, name: str) -> str:
        """A tree id (or prefix) among the caller's own trees, else the tree of a
        headish the caller sees: resolved here, once, so `loom.tree` gets a whole id."""
        assert isinstance(self.names, UserNames)
        if looks_like_prefix(name):
            found = self.names.tree_ids(name.upper(), AmbiguousName.LOOKUP)
            if len(found) == 1:
                return found[0]
            if found:
                raise AmbiguousName("tree", name, found)
        return self.position(name).tree

    def sees(self, tree_id: str) -> bool:
        with self.loom.unit(USERS) as db:
            row = db.one("SELECT user_id FROM user_trees WHERE tree_id = ?", (tree_id,))
        return row is not None and row[0] == self._uid

    def visible(self, tree_ids: Iterable[str]) -> set[str]:
        wanted = set(tree_ids)
        if not wanted:
            return set()
        return wanted & self.tree_ids()

    def tree_ids(self) -> set[str]:
        """Every tree recorded as the caller's, archived ones too (one read)."""
        with self.loom.unit(USERS) as db:
            rows = db.execute("SELECT tree_id FROM user_trees WHERE user_id = ?",
                              (self._uid,))
        return {r[0] for r in rows}

    def claim(self, tree_ids: Iterable[str]) -> None:
        with self.loom.unit(USERS) as db:
            db.executemany("INSERT INTO user_trees VALUES (?, ?)",
                           [(t, self._uid) for t in tree_ids])

    def sees_document(self, document_id: str) -> bool:
        return bool(self._owned(_DOCUMENTS, [document_id]))

    def sees_collection(self, collection_id: str) -> bool:
        return bool(self._owned(_COLLECTIONS, [collection_id]))

    def visible_documents(self, document_ids: Iterable[str]) -> set[str]:
        return self._owned(_DOCUMENTS, document_ids)

    def visible_collections(self, collection_ids: Iterable[str]) -> set[str]:
        return self._owned(_COLLECTIONS, collection_ids)

    def claim_document(self, document_id: str) -> None:
        self._claim(_DOCUMENTS, document_id)

    def claim_collection(self, collection_id: str) -> None:
        self._claim(_COLLECTIONS, collection_id)

    def release_document(self, document_id: str) -> None:
        table, column = _DOCUMENTS
        with self.loom.unit(USERS) as db:
            db.execute(f"DELETE FROM {table} WHERE {column} = ? AND user_id = ?",
                       (document_id, self._uid))

    def _owned(self, owned: tuple[str, str], ids: Iterable[str]) -> set[str]:
        """Those of `ids` recorded as the caller's: one lookup for one id, else (as
        `visible` does for trees) the caller's whole list of that kind, which is short
        next to the store's."""
        wanted = set(ids)
        if not wanted:
            return set()
        table, column = owned
        with self.loom.unit(USERS) as db:
            if len(wanted) == 1:
                rows = db.execute(f"SELECT {column} FROM {table} WHERE {column} = ? "
                                  "AND user_id = ?", (next(iter(wanted)), self._uid))
            else:
                rows = db.execute(f"SELECT {column} FROM {table} WHERE user_id = ?",
                                  (self._uid,))
        return wanted & {r[0] for r in rows}

    def _claim(self, owned: tuple[str, str], thing_id: str) -> None:
        table, _ = owned
        with self.loom.unit(USERS) as db:
            db.execute(f"INSERT INTO {table} VALUES (?, ?)", (thing_id, self._uid))

    def record_import(self, filename: str, summary: dict[str, object]) -> None:
        with self.loom.unit(USERS) as db:
            db.execute("INSERT INTO user_imports VALUES (?, ?, ?, ?, ?)",
                       (new_id(), self._uid, now(), filename,
                        json.dumps(summary, ensure_ascii=False)))


def owners(loom: Loom, tree_ids: Iterable[str]) -> dict[str, str]:
    """The owner (a user id) of each of `tree_ids` a user owns, in one read; a tree no
    user owns (the operator's, or any tree of a store without users) is left out. A
    store that never had users is asked nothing (and given no tables)."""
    wanted = sorted(set(tree_ids))
    if not wanted or not loom.has_area(USERS):
        return {}
    out: dict[str, str] = {}
    with loom.unit(USERS) as db:
        for cond, args in db.where_in("tree_id", wanted):
            out.update(db.execute(f"SELECT tree_id, user_id FROM user_trees WHERE {cond}", args))
    return out


def same_owner(loom: Loom, holder: str, named: str) -> bool:
    """Whether whoever may read tree `holder` may also read tree `named`: a reference a
    tree holds (a spawn lineage, a report's way back) is followed only then. A user's
    tree may name only that user's trees; the operator's (no user's) may name any."""
    found = owners(loom, (holder, named))
    return holder not in found or found.get(named) == found[holder]

