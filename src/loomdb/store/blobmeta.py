"""What the store knows of each blob (size, media type); the bytes live in a BlobStore.
Interface and SQL, written once for both dialects."""

from __future__ import annotations

from abc import ABC, abstractmethod
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
        """Record a blob (a blob recorded already is left as it is)."""

    @abstractmethod
    def get_blob_meta(self, blob_id: str) -> BlobMeta | None:
        """(size, mime type) of a blob known to the store."""

    @abstractmethod
    def list_blob_meta(self) -> list[tuple[str, int, str]]:
        """(id, size, created_at) of every blob the store knows (garbage collection)."""

    @abstractmethod
    def delete_blob_meta(self, blob_id: str, before: str) -> bool:
        """Forget a blob recorded before `before`; False when it is newer or unknown."""


class BlobMetaSQL(SqlRunner, BlobMetaStore):
    """`BlobMetaStore` over shared SQL."""

    def put_blob_meta(self, blob_id: str, size: int, mime_type: str, at: str) -> None:
        self.q_run(
            "INSERT INTO blobs (id, size, mime_type, created_at) VALUES (?,?,?,?)"
            " ON CONFLICT DO NOTHING",
            (hex_to_bytes(blob_id), size, mime_type, at),
        )

    def get_blob_meta(self, blob_id: str) -> BlobMeta | None:
        row = self.q_one("SELECT size, mime_type FROM blobs WHERE id = ?",
                         (hex_to_bytes(blob_id),))
        return None if row is None else BlobMeta(row[0], row[1])

    def list_blob_meta(self) -> list[tuple[str, int, str]]:
        rows = self.q_all("SELECT id, size, created_at FROM blobs ORDER BY created_at")
        return [(bytes_to_hex(bytes(r[0])), r[1], r[2]) for r in rows]

    def delete_blob_meta(self, blob_id: str, before: str) -> bool:
        return self.q_one("DELETE FROM blobs WHERE id = ? AND created_at < ? RETURNING id",
                          (hex_to_bytes(blob_id), before)) is not None
