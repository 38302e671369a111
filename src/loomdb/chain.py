"""The hash chain: tamper evidence for every node (MODEL.md invariant 5, seed 001).

A node's chain hash is SHA-256 over the RFC 8785 canonical JSON of

    {"v": 1, "content": <content id>, "parents": [sorted chain hashes],
     "created_at": <ISO 8601 UTC>, "author": <author id>,
     "role": ..., "kind": ..., "edited_from": <id or null>, "options": <delta or null>}

plus `"response": <raw response hash>` when a model generation produced the node.
The content enters through its own id (the SHA-256 of its canonical JSON), as in a
Merkle tree, so a content change shows up both as a content/id mismatch and through
every chain hash above it. `parents` are the chain hashes of every node the new node
was actually created from: its parent, the extra sources of its hyperedge, and the
versions its ref had selected along the path. Role, kind, options and edited_from are
covered too, so no immutable field of a node can change unseen. The overlay
(bookmarks, tags, excluded, pruned) is deliberately outside the hash.
"""

from __future__ import annotations

from json.encoder import encode_basestring
from typing import Any

from .content import canonical, canonical_plain, digest, is_plain
from .errors import InvalidInput

CHAIN_VERSION = 1


def chain_hash(
    *,
    content_id: str,
    parents: list[str],
    created_at: str,
    author: str,
    role: str,
    kind: str,
    edited_from: str | None,
    options: dict[str, Any] | None,
    response: str | None = None,
) -> str:
    if options is None and response is None:
        return digest(_message_doc(content_id, parents, created_at, author, role, kind, edited_from))
    doc: dict[str, Any] = {
        "v": CHAIN_VERSION,
        "content": content_id,
        "parents": sorted(parents),
        "created_at": created_at,
        "author": author,
        "role": role,
        "kind": kind,
        "edited_from": edited_from,
        "options": options,
    }
    if response is not None:
        doc["response"] = response
    if options is None or is_plain(options):  # every other member is a string or a list
        return digest(canonical_plain(doc))
    return digest(canonical(doc))


_str = encode_basestring  # a JSON string, escaped as RFC 8785 does


def _message_doc(
    content_id: str, parents: list[str], created_at: str, author: str, role: str, kind: str,
    edited_from: str | None,
) -> bytes:
    """The canonical bytes of a chain document without options or response (most nodes),
    written directly with its keys in order: the bytes `canonical` gives, a test pins it."""
    text = (
        f'{{"author":{_str(author)},"content":{_str(content_id)},'
        f'"created_at":{_str(created_at)},'
        f'"edited_from":{"null" if edited_from is None else _str(edited_from)},'
        f'"kind":{_str(kind)},"options":null,'
        f'"parents":[{",".join(_str(p) for p in sorted(parents))}],'
        f'"role":{_str(role)},"v":{CHAIN_VERSION}}}'
    )
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput("author", "text is not valid Unicode (lone surrogate)") from None
