"""What one caller sees: the ownership of `loomdb.users.Access` applied to names and
addresses of every area, once, for every edge.

The users area sits below the other areas and knows their ids only; this module, above
them all, maps names and addresses to those ids. The rules, on a store with users (the
operator, `users.Everyone`, sees and may use everything, as the CLI does):

* Document and collection names stay unique in the whole store, as in the library. A
  document or collection is a user's when the users area records them as its owner;
  creating one records it in the same transaction. Another user's reads exactly as an
  unknown name: NotFound, with the same message.
* Creating a name someone else holds is refused as taken (InvalidInput), saying
  nothing more.
* An address a caller gives (an item's entity, a link's ends, the thing whose
  backlinks are asked) must name something they see: a node or tree of theirs, a
  document or collection of theirs (or one of its revisions or items), or a content or
  blob that one of those holds. Anything else is unknown (NotFound).
* A blob is anyone's who holds it: content a user writes may name a blob by `ref` only
  when a message or document of theirs already holds it (anything else must bring its
  bytes as `data`), so knowing a hash reads nothing.
* Search hits and backlinks list only what the caller sees: messages in their trees,
  revisions of their documents, items of their collections (for a search, given to
  the query as a `Scope`, so nothing else is ranked); links whose both ends they see
  (an end that is gone, dangling, is seen by nobody).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from .. import content as C
from ..collections import service as K
from ..documents import service as D
from ..documents.storage import Document
from ..errors import InvalidInput, LoomError, NotFound, Unauthorized
from ..forget import trash as T
from ..headish import Position
from ..loom import Loom
from ..model import Ref, Tree
from ..pieces import service as P
from ..search.storage import Scope
from ..store.areas import Unit
from ..users import Access

TAKEN = "the name is taken (names are unique in the store); choose another"


class Sight:
    """A caller's view of the store: name resolution and the checks every area object
    makes before it acts. Remembers nothing between calls (see `Seen` for one call)."""

    def __init__(self, who: Access) -> None:
        self.who = who
        self.loom: Loom = who.loom

    @property
    def shared(self) -> bool:
        """Whether ownership applies (a user, not the operator)."""
        return self.who.user is not None

    @property
    def actor(self) -> str | None:
        """The name a record of the caller's act carries (None: the operator)."""
        return self.who.user.name if self.who.user is not None else None

    @property
    def pieces(self) -> P.Scope:
        """Whose prompt pieces the caller sees (a user: their own; the operator: all)."""
        user = self.who.user
        return P.OPERATOR if user is None else P.Scope(owner=user.id, everyone=False)

    def options(self, options: dict[str, Any] | None, where: str = "options") -> dict[str, Any] | None:
        """Options as a user may write them: a system piece they have (found once, here)."""
        if not self.shared or not isinstance(options, dict):
            return options
        return P.piece_options(self.loom, self.pieces, options, where)

    def operator_only(self, why: str) -> None:
        """Refuse a user (Unauthorized, saying `why`): what only the operator may do."""
        if self.shared:
            raise Unauthorized(why)

    def atomic(self) -> AbstractContextManager[Unit]:
        """One transaction: a check, the write it guards and the owner it records."""
        return self.who.atomic()

    # -- the core: nodes, trees, refs -------------------------------------------------
    def position(self, headish: str | Position) -> Position:
        """A name resolved once against what the caller sees (a Position is taken as
        already resolved by this caller)."""
        return headish if isinstance(headish, Position) else self.who.position(headish)

    def at(self, headish: str) -> str | Position:
        """What an operation at `headish` is given (see `Access.at`)."""
        return self.who.at(headish)

    def tree(self, name: str) -> Tree:
        return self.who.tree(name)

    def ref(self, name: str) -> Ref:
        return self.who.ref(name)

    @contextmanager
    def naming_ref(self, name: str | None, what: str = "session") -> Iterator[None]:
        """Around a write that makes a ref called `name`: a name another user holds is
        refused as taken, saying nothing more (the library's answer names its kind)."""
        try:
            yield
        except InvalidInput:
            if self.shared and name is not None and self._foreign_ref(name):
                raise InvalidInput(f"{what} {name!r}", TAKEN) from None
            raise

    def _foreign_ref(self, name: str) -> bool:
        try:
            ref = self.loom.ref(name)
        except NotFound:
            return False
        return not self.who.sees(ref.tree)

    def sees_tree(self, tree_id: str) -> bool:
        return self.who.sees(tree_id)

    def visible(self, tree_ids: Iterable[str]) -> set[str]:
        return self.who.visible(tree_ids)

    def trees(self, archived: bool = False) -> list[Tree]:
        """The caller's trees (or archived ones), but for those in the trash."""
        aside = self.trashed()
        return [t for t in self.who.trees(archived=archived) if t.id not in aside]

    def trashed(self) -> set[str]:
        """Ids of the trees in the trash (hidden from listings and search)."""
        return T.trashed(self.loom)

    def every_tree(self) -> list[Tree]:
        """The caller's trees, archived ones too."""
        return self.who.trees() + self.who.trees(archived=True)

    def claim(self, tree_ids: Iterable[str]) -> None:
        self.who.claim(tree_ids)

    def scope(self) -> Scope:
        """What a search by the caller may rank: their trees, documents, collections."""
        return Scope(frozenset(self.who.tree_ids() - self.trashed()), frozenset(self.my_documents()),
                     frozenset(self.my_collections()))

    # -- documents ------------------------------------------------------------------
    def document(self, name: str) -> Document | None:
        """Refuse, as unknown, a document that is not the caller's; returns it for a
        user (None for the operator, who is checked for nothing)."""
        if not self.shared:
            return None
        doc = D.find(self.loom, name)
        if doc is None or not self.who.sees_document(doc.id):
            raise NotFound("document", name)
        return doc

    def refuse_taken_document(self, name: str) -> bool:
        """Whether the name exists; refused as taken when it is not the caller's."""
        doc = D.find(self.loom, name)
        if doc is not None and not self.who.sees_document(doc.id):
            raise InvalidInput(f"document {name!r}", TAKEN)
        return doc is not None

    def my_documents(self) -> set[str]:
        """Names of the caller's documents."""
        ids = D.ids_by_name(self.loom)
        seen = self.who.visible_documents(ids.values())
        return {name for name, i in ids.items() if i in seen}

    # -- collections ----------------------------------------------------------------
    def collection(self, name: str) -> None:
        """Refuse, as unknown, a collection that is not the caller's."""
        if not self.shared:
            return
        coll = K.find(self.loom, name)
        if coll is None or not self.who.sees_collection(coll.id):
            raise NotFound("collection", name)

    def refuse_taken_collection(self, name: str) -> None:
        found = K.find(self.loom, name)
        if found is not None and not self.who.sees_collection(found.id):
            raise InvalidInput(f"collection {name!r}", TAKEN)

    def my_collections(self) -> set[str]:
        found = K.collections(self.loom)
        keep = self.who.visible_collections(c.id for c in found)
        return {c.name for c in found if c.id in keep}

    # -- content ---------------------------------------------------------------------
    def content(self, value: Any, where: str = "content") -> Any:
        """`value` as a user may write it: every blob it names by `ref` (or
        `thumbnail_ref`) one of their messages or documents holds; otherwise refused,
        saying the same whether or not that blob exists (InvalidInput). Bytes sent as
        `data` are theirs to send; the operator's content is checked for nothing."""
        if not self.shared or not isinstance(value, list):
            return value
        value = P.resolve_blocks(self.loom, self.pieces, value, where)
        named = list(_named_blobs(value, where))
        if named:
            held = Seen(self).contents()
            for place, ref in named:
                if ref not in held:
                    raise InvalidInput(place, "names no blob of yours; send its bytes as "
                                       "`data` instead of naming it by `ref`")
        return value

    # -- addresses ------------------------------------------------------------------
    def address(self, text: str, seen: Seen | None = None) -> str:
        """The address to hand on: refused, as unknown, when it names something the
        caller does not see (the address grammar is `loomdb.addresses`; a
        malformed one is left to the operation, which says what is wrong with it). A
        node or tree comes back as its whole id, resolved here once against what the
        caller sees, so the operation cannot read the name as something else."""
        if not self.shared or not text:
            return text
        if text.startswith("tree:"):
            return "tree:" + self.tree(text[len("tree:"):]).id
        if text.startswith("doc:"):
            self.document(D.split_spec(text[len("doc:"):])[0])
        elif text.startswith("coll:"):
            self.collection(text[len("coll:"):].partition("/")[0])
        elif text.startswith("sha256:"):
            if text not in (seen or Seen(self)).contents():
                raise NotFound("content or blob", text)
        else:
            return self.position(text).node
        return text


def _named_blobs(blocks: list[Any], where: str) -> Iterator[tuple[str, str]]:
    """(place, blob id) of every blob the blocks name by reference (not by bytes)."""
    for i, block in enumerate(blocks):
        if not isinstance(block, dict):
            continue
        for key in ("ref", "thumbnail_ref"):
            if isinstance(block.get(key), str) and (key != "ref" or "data" not in block):
                yield f"{where}[{i}].{key}", block[key]
        if isinstance(block.get("content"), list):
            yield from _named_blobs(block["content"], f"{where}[{i}].content")


class Seen:
    """What one call needs to know of the caller's things more than once (a search's
    hits, a list of backlinks), read at most once for that call."""

    def __init__(self, sight: Sight) -> None:
        self.sight = sight
        self._documents: set[str] | None = None
        self._collections: set[str] | None = None
        self._contents: set[str] | None = None

    def documents(self) -> set[str]:
        if self._documents is None:
            self._documents = self.sight.my_documents()
        return self._documents

    def collections(self) -> set[str]:
        if self._collections is None:
            self._collections = self.sight.my_collections()
        return self._collections

    def contents(self) -> set[str]:
        """Every content id and blob the caller's messages and documents hold: a
        content is anyone's who holds it, so naming one by hash needs holding it. Read
        whole once per call, and only when an address is a hash."""
        if self._contents is None:
            loom = self.sight.loom
            held: set[str] = set()
            for tree in self.sight.every_tree():
                for node in loom.tree_nodes(tree.id):
                    held.add(node.content_id)
                    held.update(C.blob_refs(node.content))
            held |= D.held_contents(loom, sorted(self.documents()))
            self._contents = held
        return self._contents

    def address(self, address: str) -> bool:
        """Whether the caller sees what an address names."""
        try:
            self.sight.address(address, self)
        except LoomError:
            return False
        return True


__all__ = ["TAKEN", "Seen", "Sight"]
