"""The metadata overlay (bookmarks, labels, pruned / excluded flags, tags): the
interface and its SQL, written once for both dialects.

The overlay is mutable and never hashed: it sits beside the nodes, keyed by node id."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from ..errors import InvalidInput
from ..model import Meta
from .runner import SqlRunner

META_FIELDS = ("bookmarked", "label", "pruned", "excluded")


class MetaStore(ABC):
    """Per-node overlay rows and tags."""

    @abstractmethod
    def get_meta(self, ids: Sequence[str]) -> dict[str, Meta]:
        """Overlay of the given nodes; nodes without one are absent."""

    @abstractmethod
    def set_meta(self, node_id: str, tree_id: str, fields: dict[str, Any]) -> None:
        """Set bookmarked / label / pruned / excluded on a node."""

    @abstractmethod
    def add_tags(self, node_id: str, tree_id: str, tags: Sequence[str]) -> None:
        """Tag a node (tags it has already are kept once)."""

    @abstractmethod
    def remove_tags(self, node_id: str, tags: Sequence[str]) -> None:
        """Untag a node (tags it does not have are ignored)."""

    @abstractmethod
    def flagged(self, tree_id: str, flag: str) -> set[str]:
        """Ids of the tree's nodes with overlay flag `excluded` or `pruned` set."""


class MetaSQL(MetaStore):
    """`MetaStore` over shared SQL."""

    def __init__(self, sql: SqlRunner) -> None:
        self.sql = sql

    def get_meta(self, ids: Sequence[str]) -> dict[str, Meta]:
        base: dict[str, tuple[bool, str | None, bool, bool]] = {}
        tags: dict[str, list[str]] = {}
        for cond, args in self.sql.ids_in("node_id", ids):
            for nid, bm, label, pruned, excluded in self.sql.q_all(
                f"SELECT node_id, bookmarked, label, pruned, excluded FROM node_meta WHERE {cond}",
                args,
            ):
                base[nid] = (bool(bm), label, bool(pruned), bool(excluded))
            for nid, tag in self.sql.q_all(
                f"SELECT node_id, tag FROM node_tags WHERE {cond} ORDER BY tag", args
            ):
                tags.setdefault(nid, []).append(tag)
        out: dict[str, Meta] = {}
        for nid in set(base) | set(tags):
            bm, label, pruned, excluded = base.get(nid, (False, None, False, False))
            out[nid] = Meta(bm, label, pruned, excluded, tuple(tags.get(nid, ())))
        return out

    def set_meta(self, node_id: str, tree_id: str, fields: dict[str, Any]) -> None:
        bad = [k for k in fields if k not in META_FIELDS]
        if bad:
            raise InvalidInput("metadata", f"unknown field {bad[0]!r}")
        self.sql.q_run("INSERT INTO node_meta (node_id, tree_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                   (node_id, tree_id))
        sets = ", ".join(f"{k} = ?" for k in fields)
        self.sql.q_run(f"UPDATE node_meta SET {sets} WHERE node_id = ? AND tree_id = ?",
                   (*fields.values(), node_id, tree_id))

    def add_tags(self, node_id: str, tree_id: str, tags: Sequence[str]) -> None:
        self.sql.q_many(
            "INSERT INTO node_tags (node_id, tree_id, tag) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            [(node_id, tree_id, t) for t in tags],
        )

    def remove_tags(self, node_id: str, tags: Sequence[str]) -> None:
        self.sql.q_many("DELETE FROM node_tags WHERE node_id = ? AND tag = ?",
                    [(node_id, t) for t in tags])

    def flagged(self, tree_id: str, flag: str) -> set[str]:
        if flag not in ("excluded", "pruned"):
            raise InvalidInput("flag", f"{flag!r} is not one of excluded, pruned")
        rows = self.sql.q_all(f"SELECT node_id FROM node_meta WHERE tree_id = ? AND {flag} = 1",
                          (tree_id,))
        return {r[0] for r in rows}
