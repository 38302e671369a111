"""What the store knows of each blob (size, media type, when it was last put or named);
the bytes live in a BlobStore. Interface and SQL, written once for both dialects.

`created_at` is the blob's last use, not its first put: putting the same bytes again
and naming the blob in new content both move it forward, so garbage collection, which
deletes only blobs older than its grace period, never takes one a writer has just
started using again (see `loomdb.gc.service`)."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Collection
from typing import NamedTuple

from .rows import bytes_to_hex, hex_to_bytes
from .runner import SqlRunner


class BlobMeta(NamedTuple):
    """Size in bytes and media type of a stored blob."""

    size: int
    mime_type: str


class BlobMetaStore(ABC):
    """Blob metadata rows, keyed by the blob's `sha256:` id."""

    @abstractmethod
    def put_blob_meta(self, blob_id: str, size: int, mime_type: str, at: str) -> None:
        """Record a blob; one recorded already keeps its size and type, and its time
        moves forward to `at` (a put again is a new use)."""

    @abstractmethod
    def touch_blob_meta(self, blob_id: str, at: str) -> bool:
        """Move a recorded blob's time forward to `at` (new content names it); False
        when the store does not know it."""

    @abstractmethod
    def get_blob_meta(self, blob_id: str) -> BlobMeta | None:
        """(size, mime type) of a blob known to the store."""

    @abstractmethod
    def list_blob_meta(self) -> list[tuple[str, int, str]]:
        """(id, size, created_at) of every blob the store knows (garbage collection)."""

    @abstractmethod
    def delete_blob_meta(self, blob_id: str, before: str) -> bool:
        """Forget a blob last used before `before`; False when it is newer or unknown."""

    @abstractmethod
    def blobs_named(self, blob_ids: Collection[str]) -> set[str]:
        """Which of `blob_ids` any stored node content names (one pass over the stored
        contents; a mention anywhere in a body counts, so the answer errs on keeping)."""


_NAMED = re.compile(r"sha256:[0-9a-f]{64}")


class BlobMetaSQL(BlobMetaStore):
    """`BlobMetaStore` over shared SQL."""

    def __init__(self, sql: SqlRunner, bodies: str) -> None:
        self.sql = sql
        #: the stored content bodies that may name a blob (each dialect keeps them apart)
        self.bodies = bodies

    def put_blob_meta(self, blob_id: str, size: int, mime_type: str, at: str) -> None:
        self.sql.q_run(
            "INSERT INTO blobs (id, size, mime_type, created_at) VALUES (?,?,?,?)"
            " ON CONFLICT (id) DO UPDATE SET created_at = excluded.created_at"
            " WHERE blobs.created_at < excluded.created_at",
            (hex_to_bytes(blob_id), size, mime_type, at),
        )

    def touch_blob_meta(self, blob_id: str, at: str) -> bool:
        return self.sql.q_run(
            "UPDATE blobs SET created_at = CASE WHEN created_at < ? THEN ? ELSE created_at END"
            " WHERE id = ?", (at, at, hex_to_bytes(blob_id))) > 0

    def get_blob_meta(self, blob_id: str) -> BlobMeta | None:
        row = self.sql.q_one("SELECT size, mime_type FROM blobs WHERE id = ?",
                         (hex_to_bytes(blob_id),))
        return None if row is None else BlobMeta(row[0], row[1])

    def list_blob_meta(self) -> list[tuple[str, int, str]]:
        rows = self.sql.q_all("SELECT id, size, created_at FROM blobs ORDER BY created_at")
        return [(bytes_to_hex(bytes(r[0])), r[1], r[2]) for r in rows]

    def delete_blob_meta(self, blob_id: str, before: str) -> bool:
        return self.sql.q_one("DELETE FROM blobs WHERE id = ? AND created_at < ? RETURNING id",
                          (hex_to_bytes(blob_id), before)) is not None

    def blobs_named(self, blob_ids: Collection[str]) -> set[str]:
        wanted = set(blob_ids)
        found: set[str] = set()
        if not wanted:
            return found
        for (body,) in self.sql.q_all(self.bodies):
            found.update(wanted.intersection(_NAMED.findall(body)))
            if found == wanted:
                break
        return found
