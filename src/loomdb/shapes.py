"""The one JSON shape of a node, as every edge shows it.

`loomdb show --json`, the HTTP API (`GET /api/nodes/{h}`, held to the `NodeOut`
schema) and the MCP server (`show`, `log`, the session resource) all answer a node
with this function, so a client that reads one edge reads them all: the stored node
(`Node.to_json`) and its overlay under `meta`. A pure function of the two values, so
it sits beside them and every edge may call it.
"""

from __future__ import annotations

from typing import Any

from .model import Meta, Node


def node_json(node: Node, meta: Meta) -> dict[str, Any]:
    """A node in full, with its overlay (bookmark, tags, flags) under `meta`."""
    return {**node.to_json(), "meta": meta.to_json()}


__all__ = ["node_json"]
