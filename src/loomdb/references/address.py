"""Addresses of anything a reference, a collection item or a search hit can name:

    NODE (id, prefix or any headish)   a message
    tree:ID                            a conversation tree
    doc:NAME  doc:NAME@REV|@BRANCH     a document (its current state), or one revision
    coll:NAME  coll:NAME/ITEM          a collection, or one of its items
    sha256:HEX                         a content or a blob

An address resolves to a Target whose `key` is the identity behind it (a document id,
an item id...): references store keys, so a renamed, moved or re-versioned target is
still found at read time, and a deleted one reads as dangling.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..collections import lookup as K
from ..content import plain_text
from ..errors import InvalidInput, NotFound

if TYPE_CHECKING:
    from ..loom import Loom

_SHA = re.compile(r"sha256:[0-9a-f]{64}")
SCHEMES = ("tree:", "doc:", "coll:", "sha256:")


@dataclass(frozen=True)
class Target:
    address: str
    key: str
    kind: str  # node, tree, document, revision, collection, item, content
    tree: str | None = None


def is_node_address(text: str) -> bool:
    """A headish (no scheme): what `link` has always joined with an edge."""
    return not text.startswith(SCHEMES)


def resolve(loom: Loom, text: str) -> Target:
    """The target an address names now; NotFound or InvalidInput when it names nothing."""
    if not isinstance(text, str) or not text:
        raise InvalidInput("address", "is empty")
    if text.startswith("tree:"):
        tree = loom.tree(text[len("tree:"):])
        return Target(f"tree:{tree.id}", f"tree:{tree.id}", "tree", tree.id)
    if text.startswith("doc:"):
        return _document(loom, text[len("doc:"):])
    if text.startswith("coll:"):
        return _collection(loom, text[len("coll:"):])
    if text.startswith("sha256:"):
        return _content(loom, text)
    node = loom.node(text)
    return Target(node.id, f"node:{node.id}", "node", node.tree)


def _document(loom: Loom, spec: str) -> Target:
    from ..documents import DOCUMENTS
    from ..documents import service as D
    from ..documents import storage as DS

    name, at = D.split_spec(spec)
    with loom.unit(DOCUMENTS) as db:
        doc = DS.document(db, name)
        if at is None:
            return Target(f"doc:{name}", f"doc:{doc.id}", "document")
        if DS.branch_head(db, doc.id, at) is not None:
            return Target(f"doc:{name}@{at}", f"doc:{doc.id}@{at}", "revision")
        rev = D.resolve_revision(db, doc, at)
    return Target(f"doc:{name}@{rev.id}", f"doc:{doc.id}@{rev.id}", "revision")


def _collection(loom: Loom, spec: str) -> Target:
    name, _, item = spec.partition("/")
    coll = K.collection(loom, name)
    if not item:
        return Target(f"coll:{name}", f"coll:{coll.id}", "collection")
    found = K.item(loom, name, item)
    return Target(f"coll:{name}/{found.id}", f"item:{found.id}", "item")


def _content(loom: Loom, text: str) -> Target:
    if not _SHA.fullmatch(text):
        raise InvalidInput(f"address {text!r}", "sha256: takes 64 lowercase hex digits")
    if not content_exists(loom, text):
        raise NotFound("content or blob", text)
    return Target(text, text, "content")


def content_exists(loom: Loom, cid: str) -> bool:
    from ..documents import DOCUMENTS
    from ..documents import storage as DS

    if loom.content_body(cid) is not None or loom.blobs.has(cid):
        return True
    with loom.unit(DOCUMENTS) as db:
        return DS.stored_body(db, cid) is not None


def show(loom: Loom, key: str, written: str) -> tuple[str, bool]:
    """(the address a key reads as now, dangling?): resolved at read time."""
    try:
        return _show(loom, key), False
    except NotFound:
        return written, True


#: how many characters of a message a title shows
TITLE_CHARS = 60


def title(loom: Loom, key: str, shown: str, dangling: bool = False) -> str:
    """What a person calls the thing an address names (`shown`, as `show` reads it):
    a message's first words, a tree's title, a document's or collection's name; the
    address itself for anything else, or when it is gone."""
    scheme, _, rest = key.partition(":")
    if dangling:
        return shown
    if scheme == "node":
        node = loom.node(rest)
        return first_words(plain_text(node.content)) or f"({node.role} message)"
    if scheme == "tree":
        return loom.tree(rest).title or shown
    if shown.startswith(("doc:", "coll:")):
        return shown.partition(":")[2]
    return shown


def first_words(text: str, limit: int = TITLE_CHARS) -> str:
    """Text on one line, cut at a word before `limit` characters (marked with …)."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line[:limit].rsplit(" ", 1)[0] or line[:limit]
    return cut + "…"


def _show(loom: Loom, key: str) -> str:
    scheme, _, rest = key.partition(":")
    if scheme == "node":
        return loom.node(rest).id
    if scheme == "tree":
        return f"tree:{loom.tree(rest).id}"
    if scheme == "sha256":
        if not content_exists(loom, key):
            raise NotFound("content or blob", key)
        return key
    if scheme == "doc":
        return _show_doc(loom, rest)
    if scheme == "coll":
        return f"coll:{K.collection_by_id(loom, rest).name}"
    if scheme == "item":
        coll_name, item_id = K.item_by_id(loom, rest)
        return f"coll:{coll_name}/{item_id}"
    raise NotFound("address", key)


def _show_doc(loom: Loom, rest: str) -> str:
    from ..documents import DOCUMENTS
    from ..documents import storage as DS

    doc_id, _, at = rest.partition("@")
    with loom.unit(DOCUMENTS) as db:
        doc = DS.document_by_id(db, doc_id)
        if doc is None:
            raise NotFound("document", doc_id)
        if at and DS.branch_head(db, doc_id, at) is None and DS.revision(db, doc_id, at) is None:
            raise NotFound(f"revision of doc:{doc.name}", at)
    return f"doc:{doc.name}" + (f"@{at}" if at else "")
