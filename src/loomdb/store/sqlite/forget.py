"""Forgetting on SQLite: bodies live inline in the first node that used a content.

Deleting a node that holds a body other nodes still point at (`body_key`) hands the
body on to the first of them, so a content is still stored once. The connection
deleting runs with `secure_delete` on, so freed cells and pages are overwritten with
zeros in the pages the commit writes; `scrub` then checkpoints the WAL and truncates
it, so the older page images that held the text leave the WAL file too.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..forget import TOMBSTONE, ForgetStore
from ..nodes import NodeStore
from ..rows import bytes_to_hex, hex_to_bytes
from ..runner import SqlRunner


class SQLiteForget(ForgetStore):
    """See the module docstring."""

    dialect = "sqlite"

    def __init__(self, runner: SqlRunner, nodes: NodeStore, path: Path) -> None:
        super().__init__(runner, nodes)
        self.path = path

    def begin(self) -> None:
        """Zero what is freed from here on, on this thread's connection."""
        self._run("PRAGMA secure_delete = ON")

    def stored_contents(self, content_ids: Sequence[str]) -> set[str]:
        raw = [hex_to_bytes(c) for c in content_ids]
        out: set[str] = set()
        for i in range(0, len(raw), 500):
            part = raw[i:i + 500]
            out |= {bytes_to_hex(r[0]) for r in self._run(
                "SELECT content_id FROM nodes WHERE body IS NOT NULL AND content_id IN"
                f" ({','.join('?' * len(part))})", part)}
        return out

    def content_users(self, content_id: str) -> list[tuple[str, str]]:
        # the holder of the body, then the nodes pointing at it (a partial index)
        return [(r[0], r[1]) for r in self._run(
            "SELECT n.id, n.tree_id FROM nodes h JOIN nodes n ON n.key = h.key"
            " OR n.body_key = h.key WHERE h.content_id = ? AND h.body IS NOT NULL",
            (hex_to_bytes(content_id),))]

    def bodies_with_blobs(self, ids: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for cond, args in self._in("n.id", ids):
            for cid, body in self._run(
                    "SELECT n.content_id, coalesce(n.body, b.body) FROM nodes n LEFT JOIN nodes b"
                    f" ON b.key = n.body_key WHERE {cond}"
                    " AND coalesce(n.body, b.body) LIKE '%\"ref\"%'", args):
                out[bytes_to_hex(cid)] = body
        return out

    def blob_used(self, blob_id: str) -> bool:
        return bool(self._run("SELECT 1 FROM nodes WHERE body LIKE ? LIMIT 1",
                              (f"%{blob_id}%",)))

    def delete_nodes(self, ids: Sequence[str]) -> None:
        holders = self._holders(ids)
        for cond, args in self._in("id", ids):
            self._run(f"DELETE FROM nodes WHERE {cond}", args)
        self._hand_on(holders)

    def redact_copies(self, ids: Sequence[str]) -> None:
        # a node holding neither a body nor a pointer reads as the tombstone (nodes.BODY)
        holders = self._holders(ids)
        for cond, args in self._in("id", ids):
            self._run(f"UPDATE nodes SET body = NULL, body_key = NULL WHERE {cond}", args)
        self._hand_on(holders)

    def _holders(self, ids: Sequence[str]) -> list[tuple[Any, ...]]:
        """(key, body) of the nodes among `ids` that hold a body inline."""
        holders: list[tuple[Any, ...]] = []
        for cond, args in self._in("id", ids):
            holders += self._run(
                f"SELECT key, body FROM nodes WHERE {cond} AND body IS NOT NULL", args)
        return holders

    def _hand_on(self, holders: list[tuple[Any, ...]]) -> None:
        """Hand each body the given holders no longer keep to the first node still
        pointing at it (`nodes_body_key`), and point the others there: a content is
        still stored once, and one no node points at any more is gone."""
        if not holders:
            return
        self._run("CREATE TEMP TABLE IF NOT EXISTS forget_keys (key INTEGER PRIMARY KEY)")
        self._run("DELETE FROM temp.forget_keys")
        keys = [h[0] for h in holders]
        for i in range(0, len(keys), 500):
            part = keys[i:i + 500]
            self._run("INSERT INTO temp.forget_keys (key) VALUES "
                      + ",".join(["(?)"] * len(part)), part)
        users: dict[int, list[int]] = {}
        for key, body_key in self._run(
                "SELECT key, body_key FROM nodes WHERE body_key IN"
                " (SELECT key FROM temp.forget_keys) ORDER BY key"):
            users.setdefault(body_key, []).append(key)
        self._run("DELETE FROM temp.forget_keys")
        bodies = dict(holders)
        for old, (first, *rest) in users.items():
            self._run("UPDATE nodes SET body = ?, body_key = NULL WHERE key = ?",
                      (bodies[old], first))
            for i in range(0, len(rest), 500):
                part = rest[i:i + 500]
                self._run(f"UPDATE nodes SET body_key = ? WHERE key IN"
                          f" ({','.join('?' * len(part))})", [first, *part])

    def redact_content(self, content_id: str) -> None:
        self.set_body(content_id, TOMBSTONE)

    def set_body(self, content_id: str, body: str) -> None:
        self._run("UPDATE nodes SET body = ? WHERE content_id = ? AND body IS NOT NULL",
                  (body, hex_to_bytes(content_id)))

    def span_contents(self, trees: Sequence[str] | None, needles: Sequence[str] | None
                      ) -> dict[str, tuple[str, list[tuple[str, str]]]]:
        # the holders of the bodies (one scan, or the trees' nodes), then their readers
        cond, args = self._holding(("h.body",), needles)
        if trees is None:
            holders = self._run("SELECT h.key, h.content_id, h.body, h.id, h.tree_id FROM nodes h"
                                f" WHERE h.body IS NOT NULL{cond}", args)
        else:
            holders = []
            seen: set[int] = set()
            for tcond, targs in self._in("n.tree_id", trees):
                for row in self._run(
                        "SELECT h.key, h.content_id, h.body, h.id, h.tree_id FROM nodes n"
                        " JOIN nodes h ON h.key = coalesce(n.body_key, n.key) WHERE"
                        f" {tcond} AND h.body IS NOT NULL{cond}", [*targs, *args]):
                    if row[0] not in seen:
                        seen.add(row[0])
                        holders.append(row)
        out: dict[str, tuple[str, list[tuple[str, str]]]] = {}
        by_key: dict[int, str] = {}
        for key, cid, body, nid, tid in holders:
            hexed = bytes_to_hex(cid)
            by_key[key] = hexed
            out[hexed] = (body, [(nid, tid)])
        keys = sorted(by_key)
        for i in range(0, len(keys), 500):
            part = keys[i:i + 500]
            for nid, tid, bkey in self._run(
                    "SELECT id, tree_id, body_key FROM nodes WHERE body_key IN"
                    f" ({','.join('?' * len(part))})", part):
                out[by_key[bkey]][1].append((nid, tid))
        return out

    def scrub(self, tables: Sequence[str] = (),
              needles: Sequence[bytes] = ()) -> dict[str, Any]:
        """Checkpoint the WAL into the database file and truncate it; `complete` is
        False when a reader elsewhere held an older snapshot (the next close or
        checkpoint finishes it: docs/forget.md). Then, when `needles` (bytes of the
        erased text) are still found in the file (stale copies written before
        `secure_delete` was on: stores made by older versions), VACUUM rewrites it."""
        busy = self._checkpoint()
        out: dict[str, Any] = {"checkpoint": "complete" if busy == 0 else "incomplete"}
        if needles and self.setting("stale_copies") and self._found(needles):
            self._run("VACUUM")
            busy = self._checkpoint()
            out = {"checkpoint": "complete" if busy == 0 else "incomplete", "vacuumed": True}
            self._run("DELETE FROM forget_settings WHERE name = 'stale_copies'")
        return out

    def _checkpoint(self) -> int:
        return int(self._run("PRAGMA wal_checkpoint(TRUNCATE)")[0][0])

    def _found(self, needles: Sequence[bytes]) -> bool:
        import mmap

        with open(self.path, "rb") as fh:
            try:
                data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            except ValueError:  # an empty file
                return False
            with data:
                return any(data.find(n) >= 0 for n in needles)
