"""Addresses of anything a reference, a collection item or a search hit can name:

    NODE (id, prefix or any headish)   a message
    tree:ID                            a conversation tree
    doc:NAME  doc:NAME@REV|@BRANCH     a document (its current state), or one revision
    coll:NAME  coll:NAME/ITEM          a collection, or one of its items
    sha256:HEX                         a content or a blob

An address resolves to a Target whose `key` is the identity behind it (a document id,
an item id...): references store keys, so a renamed, moved or re-versioned target is
still found at read time, and a deleted one reads as dangling. A stored key is read
back by that exact id only (`show`, `title`), never as a name, a prefix or `~N`; whether
the reader may see what it names is the front door's check (`front.sight`).

Messages, trees and contents are the core's, resolved here through the Loom; `doc:`
and `coll:` (and the keys `doc:`, `coll:`, `item:`) belong to their areas, asked
through their hooks (`loomdb.hooks`): this module sits below the areas, so the
collections area can resolve an address without importing the documents area or the
references area.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from . import hooks
from .content import plain_text
from .errors import InvalidInput, NotFound
from .hooks import Target
from .storage_ops import storage

if TYPE_CHECKING:
    from .loom import Loom
    from .model import Node, Tree

_SHA = re.compile(r"sha256:[0-9a-f]{64}")
SCHEMES = ("tree:", "doc:", "coll:", "sha256:")
#: the area that owns each scheme an area resolves (address schemes and key schemes)
OWNERS = {"doc": "documents", "coll": "collections", "item": "collections"}

__all__ = ["OWNERS", "SCHEMES", "TITLE_CHARS", "Target", "content_exists", "first_words",
           "is_node_address", "resolve", "show", "tags", "title"]


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
    if text.startswith("sha256:"):
        return _content(loom, text)
    scheme, colon, spec = text.partition(":")
    if colon and scheme in ("doc", "coll"):
        return hooks.of(OWNERS[scheme]).resolve(loom, scheme, spec)
    node = loom.node(text)
    return Target(node.id, f"node:{node.id}", "node", node.tree)


def _content(loom: Loom, text: str) -> Target:
    if not _SHA.fullmatch(text):
        raise InvalidInput(f"address {text!r}", "sha256: takes 64 lowercase hex digits")
    if not content_exists(loom, text):
        raise NotFound("content or blob", text)
    return Target(text, text, "content")


def content_exists(loom: Loom, cid: str) -> bool:
    """Whether a node, a blob or an area (a document body) holds this content id."""
    if loom.content_body(cid) is not None or loom.blobs.has(cid):
        return True
    return hooks.holds_content(loom, cid)


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
        node = _node(loom, rest)
        return first_words(plain_text(node.content)) or f"({node.role} message)"
    if scheme == "tree":
        return _tree(loom, rest).title or shown
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


def tags(loom: Loom, kind: str, entity: str) -> list[str]:
    """The tags of a search hit's entity: a message's overlay tags, an item's tags."""
    if kind == "message":
        return list(loom.meta(entity).tags)
    if entity.startswith("coll:"):
        return hooks.of(OWNERS["coll"]).tags(loom, entity)
    return []


def _show(loom: Loom, key: str) -> str:
    scheme, _, rest = key.partition(":")
    if scheme == "node":
        return _node(loom, rest).id
    if scheme == "tree":
        return f"tree:{_tree(loom, rest).id}"
    if scheme == "sha256":
        if not content_exists(loom, key):
            raise NotFound("content or blob", key)
        return key
    if scheme in OWNERS:
        return hooks.of(OWNERS[scheme]).show(loom, scheme, rest)
    raise NotFound("address", key)


def _node(loom: Loom, node_id: str) -> Node:
    """The node a key names, by that exact id."""
    found = loom.nodes([node_id])
    if not found:
        raise NotFound("node", node_id)
    return found[0]


def _tree(loom: Loom, tree_id: str) -> Tree:
    """The tree a key names, by that exact id."""
    found = storage(loom).tree_by_id(tree_id)
    if found is None:
        raise NotFound("tree", tree_id)
    return found
