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

from typing import Any

from .content import canonical, digest

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
    return digest(canonical(doc))
