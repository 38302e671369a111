"""What a caller sees of the areas (documents, collections, references, search) over
HTTP: the ownership of `loomdb.users.Access` applied to names and addresses.

The users area sits below the areas and knows their ids only; this module, above both,
maps names and addresses to those ids. The rules, on a store with users (the
single-user store sees and may use everything, as the CLI does):

* Document and collection names stay unique in the whole store, as in the library. A
  document or collection is a user's when the users area records them as its owner;
  creating one records it in the same transaction. Another user's reads exactly as an
  unknown name: 404, with the same message.
* Creating a name someone else holds is refused as taken (400), saying nothing more.
* An address a caller gives (an item's entity, a link's ends, the thing whose
  backlinks are asked) must name something they see: a node or tree of theirs, a
  document or collection of theirs (or one of its revisions or items), or a content or
  blob that one of those holds. Anything else is unknown (404).
* Search hits and backlinks list only what the caller sees: messages in their trees,
  revisions of their documents, items of their collections; links whose both ends
  they see (an end that is gone, dangling, is seen by nobody).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import replace
from typing import Any

from fastapi import Depends

from .. import content as C
from ..collections import service as K
from ..collections.storage import Collection
from ..documents import service as D
from ..documents.storage import Document, Revision
from ..errors import InvalidInput, LoomError, NotFound
from ..loom import ContentLike
from ..references import service as R
from ..search import service as S
from ..store.areas import Unit
from ..users import Access
from .state import access

TAKEN = "the name is taken (names are unique in the store); choose another"


class Areas:
    """One request's view of the areas: checks, filters, and the writes that record an
    owner. Everything it remembers (whose documents, which contents) lives as long as
    the request."""

    def __init__(self, who: Access) -> None:
        self.who = who
        self.loom = who.loom
        self._documents: set[str] | None = None  # names of the caller's documents
        self._collections: set[str] | None = None
        self._contents: set[str] | None = None  # content ids and blobs the caller holds

    @property
    def shared(self) -> bool:
        """Whether ownership applies (the store has users)."""
        return self.who.user is not None

    def atomic(self) -> AbstractContextManager[Unit]:
        """One transaction: a check, the write it guards and the owner it records."""
        return self.who.atomic()

    # -- documents ------------------------------------------------------------------
    def document(self, name: str) -> Document | None:
        """Refuse, as unknown, a document that is not the caller's; returns it on a
        store with users (None on the single-user store, which checks nothing)."""
        if not self.shared:
            return None
        doc = D.find(self.loom, name)
        if doc is None or not self.who.sees_document(doc.id):
            raise NotFound("document", name)
        return doc

    def documents(self) -> list[dict[str, Any]]:
        """The caller's documents, as `doc list --json` lists them."""
        rows = D.documents(self.loom)
        mine = self._my_documents() if self.shared else None
        return [r for r in rows if mine is None or r["document"] in mine]

    def new_document(self, name: str, content: ContentLike,
                     message: str) -> tuple[Document, Revision]:
        """Create a document and record the caller as its owner, in one transaction."""
        with self.atomic():
            self._refuse_taken_document(name)
            doc, rev = D.new(self.loom, name, content, message)
            self.who.claim_document(doc.id)
        return doc, rev

    def from_message(self, headish: str, name: str,
                     message: str) -> tuple[Document, Revision]:
        """A document (new, and then the caller's) or a new revision of one of theirs,
        holding the content of a message they see."""
        node = self.who.position(headish).node
        with self.atomic():
            existed = self._refuse_taken_document(name)
            doc, rev = D.from_message(self.loom, node, name, message)
            if not existed:
                self.who.claim_document(doc.id)
        return doc, rev

    def delete_document(self, name: str) -> None:
        """Delete one of the caller's documents, and its ownership with it."""
        with self.atomic():
            doc = self.document(name)
            D.delete(self.loom, name)
            if doc is not None:
                self.who.release_document(doc.id)

    def _refuse_taken_document(self, name: str) -> bool:
        """Whether the name exists; refused as taken when it is not the caller's."""
        doc = D.find(self.loom, name)
        if doc is not None and not self.who.sees_document(doc.id):
            raise InvalidInput(f"document {name!r}", TAKEN)
        return doc is not None

    def _my_documents(self) -> set[str]:
        if self._documents is None:
            ids = D.ids_by_name(self.loom)
            seen = self.who.visible_documents(ids.values())
            self._documents = {name for name, i in ids.items() if i in seen}
        return self._documents

    # -- collections ----------------------------------------------------------------
    def collection(self, name: str) -> None:
        """Refuse, as unknown, a collection that is not the caller's."""
        if not self.shared:
            return
        coll = K.find(self.loom, name)
        if coll is None or not self.who.sees_collection(coll.id):
            raise NotFound("collection", name)

    def collections(self) -> list[Collection]:
        found = K.collections(self.loom)
        keep = self.who.visible_collections(c.id for c in found)
        return [c for c in found if c.id in keep]

    def new_collection(self, name: str, kind: str) -> Collection:
        """Create a collection and record the caller as its owner, in one transaction."""
        with self.atomic():
            found = K.find(self.loom, name)
            if found is not None and not self.who.sees_collection(found.id):
                raise InvalidInput(f"collection {name!r}", TAKEN)
            coll = K.new(self.loom, name, kind)
            self.who.claim_collection(coll.id)
        return coll

    def _my_collections(self) -> set[str]:
        if self._collections is None:
            self._collections = {c.name for c in self.collections()}
        return self._collections

    # -- addresses ------------------------------------------------------------------
    def address(self, text: str) -> str:
        """The address to hand on: refused, as unknown, when it names something the
        caller does not see (the address grammar is `loomdb.references.address`; a
        malformed one is left to the operation, which says what is wrong with it). A
        node or tree comes back as its whole id, resolved here once against what the
        caller sees, so the operation cannot read the name as something else."""
        if not self.shared or not text:
            return text
        if text.startswith("tree:"):
            return "tree:" + self.who.tree(text[len("tree:"):]).id
        if text.startswith("doc:"):
            self.document(D.split_spec(text[len("doc:"):])[0])
        elif text.startswith("coll:"):
            self.collection(text[len("coll:"):].partition("/")[0])
        elif text.startswith("sha256:"):
            if text not in self._held_contents():
                raise NotFound("content or blob", text)
        else:
            return self.who.position(text).node
        return text

    def sees(self, address: str) -> bool:
        try:
            self.address(address)
        except LoomError:
            return False
        return True

    def _held_contents(self) -> set[str]:
        """Every content id and blob the caller's messages and documents hold: a
        content is anyone's who holds it, so naming one by hash needs holding it. Read
        whole once per request, and only when an address is a hash."""
        if self._contents is None:
            held: set[str] = set()
            for tree in self.who.trees() + self.who.trees(archived=True):
                for node in self.loom.tree_nodes(tree.id):
                    held.add(node.content_id)
                    held.update(C.blob_refs(node.content))
            held |= D.held_contents(self.loom, sorted(self._my_documents()))
            self._contents = held
        return self._contents

    # -- references and search ------------------------------------------------------
    def link(self, src: str, dst: str, type: str) -> dict[str, Any]:
        """A link between two things the caller sees (as `loomdb link --json`)."""
        return R.link(self.loom, self.address(src), self.address(dst), type)

    def backlinks(self, entity: str) -> list[dict[str, Any]]:
        """What references `entity`, among what the caller sees."""
        if not self.shared:
            return R.backlinks(self.loom, entity)
        entity = self.address(entity)
        return [x for x in R.backlinks(self.loom, entity)
                if self.sees(x["from"]) and self.sees(x["to"])]

    def search(self, q: S.Query) -> list[dict[str, Any]]:
        """Hits among what the caller sees, best first. The index ranks the whole store,
        so hits are fetched ever deeper (up to the `MAX_LIMIT` best of the store) until
        `q.limit` of the caller's are found."""
        if not self.shared:
            return S.search(self.loom, q)
        if q.tree is not None:
            q = replace(q, tree=self.who.tree(q.tree).id)
        fetch = q.limit
        while True:
            hits = S.search(self.loom, replace(q, limit=fetch))
            kept = self._visible_hits(hits)
            if len(kept) >= q.limit or len(hits) < fetch or fetch >= S.MAX_LIMIT:
                return kept[: q.limit]
            fetch = min(fetch * 4, S.MAX_LIMIT)

    def _visible_hits(self, hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
        trees = self.who.visible({h["tree"] for h in hits if "tree" in h})

        def seen(hit: dict[str, Any]) -> bool:
            entity: str = hit["entity"]
            if hit["kind"] == "message":
                return hit.get("tree") in trees
            if hit["kind"] == "document":
                return D.split_spec(entity[len("doc:"):])[0] in self._my_documents()
            if hit["kind"] == "item":
                return entity[len("coll:"):].partition("/")[0] in self._my_collections()
            return False

        return [h for h in hits if seen(h)]


def areas(who: Access = Depends(access)) -> Areas:
    """Dependency: the caller's view of the areas."""
    return Areas(who)
